package io.github.ratelimit.internal.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.util.UrlPathHelper;

import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.internal.pipeline.PrincipalNames;
import io.github.ratelimit.internal.pipeline.ProblemResponse;
import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.Verdict;

/**
 * A servlet request as the request pipeline sees it, and the servlet side of what the
 * pipeline answers: its per-request state as a request attribute, headers and problem
 * responses written to the servlet response.
 */
public final class ServletRateLimitRequest implements RateLimitRequest {

	private static final UrlPathHelper PATHS = UrlPathHelper.defaultInstance;

	private final HttpServletRequest request;

	/**
	 * Adapts a request.
	 * @param request the servlet request
	 */
	public ServletRateLimitRequest(HttpServletRequest request) {
		this.request = request;
	}

	@Override
	public String method() {
		return this.request.getMethod();
	}

	/** Decoded and without path parameters, as Spring MVC matches handlers. */
	@Override
	public String path() {
		return PATHS.getPathWithinApplication(this.request);
	}

	@Override
	public List<String> headers(String name) {
		Enumeration<String> values = this.request.getHeaders(name);
		if (values == null || !values.hasMoreElements()) {
			return List.of();
		}
		List<String> lines = new ArrayList<>(1);
		while (values.hasMoreElements()) {
			lines.add(values.nextElement());
		}
		return lines;
	}

	@Override
	public String header(String name) {
		return this.request.getHeader(name);
	}

	@Override
	public String remoteAddress() {
		return this.request.getRemoteAddr();
	}

	/** Spring Security's authentication on this thread, else the servlet principal. */
	@Override
	public Principal principal() {
		return PrincipalNames.current(this.request.getUserPrincipal());
	}

	@Override
	public Object nativeRequest() {
		return this.request;
	}

	/**
	 * The limiting state of a request.
	 * @param request the request
	 * @return the state, or {@code null} when no stage has limited it yet
	 */
	public static RequestLimits state(HttpServletRequest request) {
		Object state = request.getAttribute(RequestLimits.ATTRIBUTE);
		return (state instanceof RequestLimits existing) ? existing : null;
	}

	/**
	 * The limiting state of a request, created on first use.
	 * @param request the request
	 * @return the state
	 */
	public static RequestLimits stateOrCreate(HttpServletRequest request) {
		RequestLimits state = state(request);
		if (state == null) {
			state = new RequestLimits();
			request.setAttribute(RequestLimits.ATTRIBUTE, state);
		}
		return state;
	}

	/**
	 * The costs a request settles once its response is final.
	 * @param request the request
	 * @return the costs, or {@code null} when nothing asked for them yet
	 */
	public static RequestCosts costs(HttpServletRequest request) {
		Object costs = request.getAttribute(RequestCosts.ATTRIBUTE);
		return (costs instanceof RequestCosts existing) ? existing : null;
	}

	/**
	 * The costs a request settles once its response is final, created on first use.
	 * @param request the request
	 * @return the costs
	 */
	public static RequestCosts costsOrCreate(HttpServletRequest request) {
		RequestCosts costs = costs(request);
		if (costs == null) {
			costs = new RequestCosts();
			request.setAttribute(RequestCosts.ATTRIBUTE, costs);
		}
		return costs;
	}

	/**
	 * Carries out a verdict: the headers and the drain delay of an admitted stage, or the
	 * problem response.
	 * @param verdict the verdict
	 * @param state the request's state
	 * @param response the response
	 * @param limiter renders the headers
	 * @return whether the request may proceed
	 * @throws IOException when the problem cannot be written
	 */
	public static boolean apply(Verdict verdict, RequestLimits state, HttpServletResponse response,
			RequestRateLimiter limiter) throws IOException {
		if (!verdict.proceeds()) {
			write(response, verdict.problem());
			return false;
		}
		// the response takes strings: the one each value needs is made here
		limiter.writeHeaders(state, (name, value) -> setHeader(response, name, value.toString()));
		hold(verdict);
		return true;
	}

	/**
	 * Carries out the verdict of a stage whose headers are written already
	 * ({@link RequestRateLimiter#decideAlone}): the drain delay of an admitted stage, or the
	 * problem response.
	 * @param verdict the verdict
	 * @param response the response
	 * @return whether the request may proceed
	 * @throws IOException when the problem cannot be written
	 */
	public static boolean applyWritten(Verdict verdict, HttpServletResponse response) throws IOException {
		if (!verdict.proceeds()) {
			write(response, verdict.problem());
			return false;
		}
		hold(verdict);
		return true;
	}

	private static void hold(Verdict verdict) {
		if (verdict.delayMicros() > 0) {
			try {
				// a leaky bucket smooths the output: hold the request until its drain slot
				TimeUnit.MICROSECONDS.sleep(verdict.delayMicros());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Sets a header unless the response is committed already.
	 * @param response the response
	 * @param name the header name
	 * @param value the value
	 */
	public static void setHeader(HttpServletResponse response, String name, String value) {
		if (!response.isCommitted()) {
			response.setHeader(name, value);
		}
	}

	/**
	 * Writes a problem response, replacing anything buffered, unless the response is
	 * committed already.
	 * @param response the response
	 * @param problem what to write
	 * @throws IOException when the body cannot be written
	 */
	public static void write(HttpServletResponse response, ProblemResponse problem) throws IOException {
		if (response.isCommitted()) {
			return;
		}
		response.resetBuffer();
		response.setStatus(problem.status());
		for (Map.Entry<String, String> header : problem.headers().entrySet()) {
			response.setHeader(header.getKey(), header.getValue());
		}
		response.setContentType(ProblemResponse.CONTENT_TYPE);
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		response.setContentLength(problem.body().length);
		response.getOutputStream().write(problem.body());
		response.flushBuffer();
	}

}
