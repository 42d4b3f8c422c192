package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Context of a call outside any web request (a scheduled job, a message listener): the
 * principal comes from Spring Security when present, everything else shares one bucket.
 */
public final class DetachedCallContext implements CallContext {

	/** The context whose principal is Spring Security's authentication on the calling thread. */
	public static final DetachedCallContext INSTANCE = new DetachedCallContext(null, false);

	private final Principal principal;

	private final boolean known;

	private DetachedCallContext(Principal principal, boolean known) {
		this.principal = principal;
		this.known = known;
	}

	@Override
	public Principal principal() {
		return this.known ? this.principal : PrincipalNames.current(null);
	}

	/**
	 * The context of a call made for a known principal, such as a reactive call whose
	 * principal comes from the subscriber's security context rather than from a thread.
	 * @param principal the authenticated principal, or {@code null} for nobody
	 * @return the context
	 */
	public static DetachedCallContext of(Principal principal) {
		return new DetachedCallContext(PrincipalNames.authenticated(principal), true);
	}

	@Override
	public String handlerRouteName(Method method) {
		return null;
	}

	@Override
	public String identity(String limit, List<KeySource> keyChain) {
		for (KeySource source : keyChain) {
			if (source == KeySource.PRINCIPAL) {
				String name = PrincipalNames.name(principal());
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
