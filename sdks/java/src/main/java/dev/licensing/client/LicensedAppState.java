package dev.licensing.client;

import java.time.Duration;
import java.util.List;

/**
 * What {@link LicensedApp#start()} found.
 *
 * @param activation this machine's seat
 * @param validation the validation answer for this machine
 * @param entitlements the licence's effective entitlements (feature codes)
 * @param leaseSeconds the policy's lease, or null for a node-locked seat (no heartbeats)
 * @param heartbeatEvery how often the seat is renewed in the background (a third of the lease), or null
 */
public record LicensedAppState(Activation activation, Validation validation, List<String> entitlements, Long leaseSeconds, Duration heartbeatEvery) {
    public LicensedAppState {
        entitlements = List.copyOf(entitlements);
    }
}
