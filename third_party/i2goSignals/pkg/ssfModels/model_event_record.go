package model

import (
    "time"

    "github.com/i2-open/i2goSignals/pkg/goSet"
)

// AgEventRecord is stored in MongoProvider.eventCol
type AgEventRecord struct {
    // Id        bson.ObjectID       `json:"id" bson:"_id"`
    Jti string `json:"jti" bson:"jti"`

    // A parsed Security Event Auth
    Event goSet.SecurityEventToken `json:"event"`

    // Original holds the original token received. This is useful for scenarios when the original
    // signature or encrypted token is desired
    Original string

    // Sid indicates the origin Stream that the event came from
    Sid string
    // Types indicates the event URIs available. This may be used for filtering and sorting of events
    Types []string `json:"types,omitempty" bson:"types,omitempty"`

    // Operational marks the event as a point-to-point operational event (e.g. SSF verify, stream-updated)
    // scoped to a single SSF endpoint relationship. Operational events bypass the MatchesStream
    // predicate, are persisted for audit, and are excluded from ResetDate/ResetJti replay queries.
    Operational bool `json:"operational,omitempty" bson:"operational,omitempty"`

    /*
    	SortTime is used to reset event streams and allow searching historical events from a certain point in time.
    	When set it is based upon one of the following attributes in order of preference:  toe, iat, time of insertion
    */
    SortTime time.Time `bson:"sortTime"`
}
