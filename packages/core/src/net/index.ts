export { addressLabel, cidrContains, classifyAddress, isMetadataAddress, parseCidr, parseIp, type Cidr, type IpAddress } from './address-class.js';
export { allowEntryProblem, hostAllowList, narrowAllowList, type HostAllowList } from './host-allow.js';
export { COMPRESSIBLE_FILE, PRECOMPRESSED, chooseEncoding, type Precompressed } from './content-encoding.js';
