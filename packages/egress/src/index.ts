export { egressPolicy, EgressError, type EgressFailure, type EgressPolicy, type EgressRequest, type EgressResponse, type Resolve } from './egress-policy.js';
export { EgressAllowList } from './address-ranges.js';
