package verification

import "testing"

func TestProjectionForgetsAnEntryOnceEveryTokenItRefusesHasExpired(t *testing.T) {
	projection := NewRevocationProjection(60)
	projection.Apply(TokenRotated{FamilyID: "fam_1", Generation: 2, RejectsUntil: 1000})
	projection.Apply(TokenRotated{FamilyID: "fam_1", Generation: 1, RejectsUntil: 900}) // late and older: changes nothing
	projection.Apply(CredentialTokensRevoked{ClientID: "tsl_1", NotBefore: 500, RejectsUntil: 2000})
	if !projection.IsRejected("fam_1", 1) || projection.IsRejected("fam_1", 2) {
		t.Fatal("generation 1 is refused and 2 taken after rotations to 2 then (late) 1")
	}
	if !projection.IsCutOff("acc_x", "tsl_1", 499) || projection.IsCutOff("acc_x", "tsl_1", 500) {
		t.Fatal("a credential cut refuses tokens issued before its notBefore only")
	}
	if forgotten := projection.ForgetExpired(1059); forgotten != 0 {
		t.Fatalf("forgot %d before the clock skew passed", forgotten)
	}
	if forgotten := projection.ForgetExpired(1060); forgotten != 1 || projection.IsRejected("fam_1", 1) || projection.Size() != 1 {
		t.Fatalf("forgot %d at rejectsUntil + skew; %d left", forgotten, projection.Size())
	}
	// An event whose tokens have all expired by a time already forgotten up to is not stored.
	projection.Apply(TokenRevoked{FamilyID: "fam_2", RejectsUntil: 1000})
	if projection.IsRejected("fam_2", 0) {
		t.Fatal("a revocation of expired tokens was stored")
	}
}
