package io.github.ratelimit.internal.web;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;
import io.github.ratelimit.internal.pipeline.OverloadGate;

/**
 * Admits servlet requests under the adaptive limit on calls in flight, or answers them
 * {@code 503} when their priority's share of the limit is full. Runs before the route
 * filter and Spring Security, so a saturated service spends nothing on a request it turns
 * away.
 * <p>
 * A request holds its place until its status is final: when the chain returns, or for an
 * asynchronous request when it completes. A 5xx, an exception escaping the chain, an
 * asynchronous timeout or error signal overload; a 4xx says nothing about capacity.
 * <p>
 * A critical request that finds the limit full waits for a place on the request thread,
 * at most {@code ratelimit.overload.critical-wait} (100 ms by default): a bounded block of
 * a thread that would otherwise write a {@code 503} and a retry, while no lower priority
 * request is admitted. Its latency, as the limit learns it, starts when it is admitted.
 */
public class OverloadFilter extends OncePerRequestFilter {

	/** Default order: before the route filter (-110) and Spring Security (-100). */
	public static final int DEFAULT_ORDER = -120;

	private final OverloadGate gate;

	/**
	 * Creates a filter.
	 * @param gate the overload gate
	 */
	public OverloadFilter(OverloadGate gate) {
		this.gate = gate;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		RequestPriority priority = this.gate.priority(new ServletRateLimitRequest(request));
		if (priority == null) {
			chain.doFilter(request, response);
			return;
		}
		Permit permit = this.gate.acquire(priority);
		if (permit.shed()) {
			ServletRateLimitRequest.write(response, this.gate.shed(priority));
			return;
		}
		Release release = new Release(permit);
		Throwable failure = null;
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (request.isAsyncStarted()) {
				// the request goes on after this thread returns, even when it threw after starting
				request.getAsyncContext().addListener(new AsyncRelease(release, response));
			}
			else if (failure != null) {
				release.release(OverloadGate.outcome(failure));
			}
			else {
				release.release(OverloadGate.outcome(response.getStatus(), response.getContentType()));
			}
		}
	}

	/** A permit released once, whichever of the container's threads reports the end first. */
	private static final class Release {

		private final Permit permit;

		private final AtomicBoolean released = new AtomicBoolean();

		Release(Permit permit) {
			this.permit = permit;
		}

		void release(Outcome outcome) {
			if (this.released.compareAndSet(false, true)) {
				this.permit.release(outcome);
			}
		}

	}

	/** Releases an asynchronous request's place when it ends. */
	private static final class AsyncRelease implements AsyncListener {

		private final Release release;

		private final HttpServletResponse response;

		AsyncRelease(Release release, HttpServletResponse response) {
			this.release = release;
			this.response = response;
		}

		@Override
		public void onComplete(AsyncEvent event) {
			HttpServletResponse completed = (event.getSuppliedResponse() instanceof HttpServletResponse supplied)
					? supplied : this.response;
			this.release.release(OverloadGate.outcome(completed.getStatus(), completed.getContentType()));
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			// the handler did not answer in time: a sign of overload, whatever is written next
			this.release.release(Outcome.DROPPED);
		}

		@Override
		public void onError(AsyncEvent event) {
			this.release.release(Outcome.DROPPED);
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			// a new asynchronous cycle: listen to it too
			event.getAsyncContext().addListener(this);
		}

	}

}
