export { regionSettings, type PeerLinkSettings, type RegionSettings } from './region-settings.js';
