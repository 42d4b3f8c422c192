package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * The context of a rate limited call made while a web request is handled, whatever the
 * web stack: identities come from the request, the handler's limits are decided together
 * with the route limits that waited for the principal, and admitted decisions are
 * advertised in the response headers.
 */
public final class RequestCallContext implements CallContext {

	private final RequestRateLimiter limiter;

	private final RateLimitRequest request;

	private final RequestLimits state;

	private final WebHooks web;

	/**
	 * Creates a context.
	 * @param limiter the request limiter
	 * @param request the request
	 * @param state the request's state
	 * @param web what the web stack tells about the handler and lets set on the response
	 */
	public RequestCallContext(RequestRateLimiter limiter, RateLimitRequest request, RequestLimits state,
			WebHooks web) {
		this.limiter = limiter;
		this.request = request;
		this.state = state;
		this.web = web;
	}

	/**
	 * The request state this context records into.
	 * @return the state
	 */
	public RequestLimits state() {
		return this.state;
	}

	@Override
	public String handlerRouteName(Method method) {
		return this.web.handlerRoutes().apply(method);
	}

	@Override
	public String identity(String limit, List<KeySource> keyChain) {
		return this.limiter.identity(limit, keyChain, this.request);
	}

	@Override
	public Principal principal() {
		return this.request.principal();
	}

	@Override
	public Object request() {
		return this.request.nativeRequest();
	}

	@Override
	public List<Acquisition> takeDeferredAcquisitions() {
		return this.limiter.takeDeferred(this.request, this.state);
	}

	@Override
	public void countOnly(List<Acquisition> acquisitions, CountedOutcomes statuses) {
		this.state.countOnly(acquisitions, statuses);
	}

	@Override
	public void settleOnly(List<Acquisition> acquisitions, LimitDefinition definition) {
		this.web.costs().find(true).settleOnly(acquisitions, definition);
	}

	@Override
	public void handlerReturned(Method method, Object[] args, Object value) {
		RequestCosts costs = this.web.costs().find(false);
		if (costs != null) {
			costs.returned(this.limiter.costs(), method, args, value);
		}
	}

	@Override
	public RateLimitUsage usage() {
		return this.web.costs().find(true).usage();
	}

	@Override
	public void allowed(List<Acquisition> acquisitions, RateLimitResult result) {
		this.limiter.allowed(acquisitions, result, this.state);
		RequestCosts costs = this.web.costs().find(false);
		if (costs != null) {
			costs.admitted(acquisitions, result);
		}
		this.limiter.headers(this.state, this.web.responseHeaders());
	}

	@Override
	public void rejected(RateLimitResult result, boolean refundEarlierStages) {
		this.limiter.rejected(result, this.state, refundEarlierStages);
		RequestCosts costs = this.web.costs().find(false);
		if (costs != null) {
			costs.rejected(refundEarlierStages);
		}
	}

	/**
	 * What the web stack carrying a request tells about its handler and lets set on its
	 * response.
	 *
	 * @param handlerRoutes the canonical route of a method when it is the request's
	 * handler, otherwise {@code null}
	 * @param responseHeaders sets a header of the response, while it can still be set
	 * @param costs finds the request's {@link RequestCosts}
	 */
	public record WebHooks(Function<Method, String> handlerRoutes, BiConsumer<String, String> responseHeaders,
			RequestCosts.Attribute costs) {
	}

}
