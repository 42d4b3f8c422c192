package io.github.ratelimit.pipeline;

import java.lang.reflect.Method;
import java.util.List;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Identities;
import io.github.ratelimit.core.RateLimitResult;

/**
 * Context of a call outside any web request (a scheduled job, a message listener): the
 * principal comes from Spring Security when present, everything else shares one bucket.
 */
public final class DetachedCallContext implements CallContext {

	/** The shared instance. */
	public static final DetachedCallContext INSTANCE = new DetachedCallContext();

	private DetachedCallContext() {
	}

	@Override
	public String handlerRouteName(Method method) {
		return null;
	}

	@Override
	public String identity(String limit, List<KeySource> keyChain) {
		for (KeySource source : keyChain) {
			if (source == KeySource.PRINCIPAL) {
				String name = PrincipalNames.name(PrincipalNames.current(null));
				if (name != null) {
					return Identities.principal(name);
				}
			}
			if (source == KeySource.GLOBAL) {
				return Identities.GLOBAL;
			}
		}
		return Identities.GLOBAL;
	}

	@Override
	public Object request() {
		return null;
	}

	@Override
	public List<Acquisition> takeDeferredAcquisitions() {
		return List.of();
	}

	@Override
	public void allowed(List<Acquisition> acquisitions, RateLimitResult result) {
	}

	@Override
	public void rejected(RateLimitResult result, boolean refundEarlierStages) {
	}

}
