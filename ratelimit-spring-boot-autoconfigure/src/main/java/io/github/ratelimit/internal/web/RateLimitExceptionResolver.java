package io.github.ratelimit.internal.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.pipeline.ProblemResponse;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;

/**
 * Turns {@link RateLimitExceededException} into a {@code 429} problem response, and
 * {@link RateLimitUnavailableException} into a {@code 503}. Ordered
 * ahead of Spring MVC's {@code @ExceptionHandler} resolution, so an application's
 * catch-all handler cannot swallow it.
 */
public class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

	private static final Log logger = LogFactory.getLog(RateLimitExceptionResolver.class);

	/** Right after Spring Boot's error attributes, before every other resolver. */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

	private final RequestRateLimiter limiter;

	/**
	 * Creates a resolver.
	 * @param limiter renders the rejection
	 */
	public RateLimitExceptionResolver(RequestRateLimiter limiter) {
		this.limiter = limiter;
	}

	@Override
	public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
			Exception ex) {
		if (response.isCommitted()
				|| !(ex instanceof RateLimitExceededException || ex instanceof RateLimitUnavailableException)) {
			return null;
		}
		try {
			RequestLimits state = ServletRateLimitRequest.state(request);
			ProblemResponse problem = (ex instanceof RateLimitExceededException exceeded)
					? this.limiter.rejection(state, exceeded.getDecisions())
					: this.limiter.unavailable(state, (RateLimitUnavailableException) ex);
			ServletRateLimitRequest.write(response, problem);
		}
		catch (IOException writeFailure) {
			// the client went away before its answer: handled, as far as anyone can tell, and no error
			if (logger.isDebugEnabled()) {
				logger.debug("Client went away before its " + ((ex instanceof RateLimitExceededException) ? 429 : 503)
						+ " was written: " + writeFailure);
			}
			return new ModelAndView();
		}
		return new ModelAndView();
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
