package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

/** Makes the {@link ScriptCall calls} of one store, its limits encoded and its keys prefixed. */
final class CallFactory {

	private final EncodedLimits limits;

	private final byte[] keyPrefix;

	CallFactory(EncodedLimits limits, String keyPrefix) {
		this.limits = limits;
		this.keyPrefix = keyPrefix.getBytes(StandardCharsets.UTF_8);
	}

	/** The call deciding some acquisitions. */
	ScriptCall acquisitions(List<Acquisition> acquisitions) {
		ScriptCall call = sized(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			call.set(i, acquisition.limit(), acquisition.identity(), acquisition.cost());
		}
		return call;
	}

	/** The call deciding some leases, which must name distinct buckets. */
	ScriptCall leases(List<ShareRequest> leases) {
		if (leases.isEmpty()) {
			throw new IllegalArgumentException("leases must not be empty");
		}
		ScriptCall call = sized(leases.size());
		for (int i = 0; i < leases.size(); i++) {
			ShareRequest lease = leases.get(i);
			call.set(i, lease.limit(), lease.identity(), lease.cost());
			for (int j = 0; j < i; j++) {
				if (leases.get(j).key().equals(lease.key())) {
					throw new IllegalArgumentException("leases must name distinct buckets: " + lease.key());
				}
			}
		}
		return call;
	}

	/** The call sharing the extras of some leases, at no cost. */
	ScriptCall extrasOf(List<ShareRequest> leases) {
		ScriptCall call = sized(leases.size());
		for (int i = 0; i < leases.size(); i++) {
			call.set(i, leases.get(i).limit(), leases.get(i).identity(), 0);
		}
		return call;
	}

	/** The key of a bucket, see {@link BucketKeys}. */
	String key(EncodedLimit limit, String identity) {
		return new String(limit.key(this.keyPrefix, identity), StandardCharsets.UTF_8);
	}

	EncodedLimit encoded(RateLimit limit) {
		return this.limits.get(limit);
	}

	private ScriptCall sized(int size) {
		return new ScriptCall(size, this.limits, this.keyPrefix);
	}

	/** The units wanted beyond each lease's cost. */
	static long[] extras(List<ShareRequest> leases) {
		long[] extra = new long[leases.size()];
		for (int i = 0; i < extra.length; i++) {
			extra[i] = leases.get(i).extra();
		}
		return extra;
	}

}
