package io.github.ratelimit.internal.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.random.RandomGenerator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.retry.RetryException;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * The attempts of one call, and the {@link BackOff} that {@code RetryTemplate} consults
 * between them. {@code RetryTemplate} asks a back-off for a delay without telling it what
 * failed, so the delay a response asks for reaches it through this shared state; and since
 * the template sleeps with {@link Thread#sleep(long)} and measures its timeout on the
 * system clock, the waiting and the time budget are done here, through the injected
 * sleeper and clock, and the template is handed a pause of zero.
 */
final class RetryAttempts implements BackOff, BackOffExecution {

	private static final Log logger = LogFactory.getLog(RateLimitRetryInterceptor.class);

	private final HttpRequest request;

	private final RetrySettings settings;

	private final RateLimitClock clock;

	private final RetrySleeper sleeper;

	private final RandomGenerator random;

	private final long startMicros;

	/** Caps of the exponential back-off, without jitter; full jitter is applied on top. */
	private final BackOffExecution caps;

	private int attempts;

	private RetryableResponse last;

	RetryAttempts(HttpRequest request, RetrySettings settings, RetrySources sources) {
		this.request = request;
		this.settings = settings;
		this.clock = sources.clock();
		this.sleeper = sources.sleeper();
		this.random = sources.random();
		this.startMicros = this.clock.nowMicros();
		// whole milliseconds, at least one: a sub-millisecond cap would never grow
		ExponentialBackOff exponential = new ExponentialBackOff(Math.max(1, settings.initialDelay().toMillis()),
				settings.multiplier());
		exponential.setMaxInterval(Math.max(1, settings.maxDelay().toMillis()));
		this.caps = exponential.start();
	}

	/**
	 * Passes a response through, or throws it to {@code RetryTemplate} when its status is
	 * one to retry.
	 */
	ClientHttpResponse check(ClientHttpResponse response) throws IOException, RetryableResponse {
		this.attempts++;
		int status;
		try {
			status = response.getStatusCode().value();
		}
		catch (IOException | RuntimeException ex) {
			response.close();
			throw ex;
		}
		if (!this.settings.statuses().contains(status)) {
			return response;
		}
		Duration serverDelay = ServerDelays.of(response.getHeaders(), now());
		this.last = new RetryableResponse(response, serverDelay, status + " for " + describe());
		throw this.last;
	}

	@Override
	public BackOffExecution start() {
		return this;
	}

	/**
	 * Waits before the next attempt, or answers {@link #STOP} when the call should end with
	 * the last response: attempts used up, a server delay beyond {@code maxDelay}, a wait
	 * that would end beyond the time budget, or an interrupt.
	 */
	@Override
	public long nextBackOff() {
		// advanced on every retry, so the n-th retry has the n-th cap whatever came before
		long cap = this.caps.nextBackOff();
		if (this.attempts >= this.settings.maxAttempts()) {
			return giveUp("after " + this.attempts + " attempts");
		}
		Duration delay = this.last.serverDelay();
		if (delay == null) {
			delay = Duration.ofMillis(this.random.nextLong(cap + 1));
		}
		else if (delay.compareTo(this.settings.maxDelay()) > 0) {
			return giveUp("the server asks to wait " + delay + ", longer than the maximum delay");
		}
		Duration elapsed = Duration.of(this.clock.nowMicros() - this.startMicros, ChronoUnit.MICROS);
		if (elapsed.plus(delay).compareTo(this.settings.maxTotalTime()) > 0) {
			return giveUp("waiting " + delay + " would exceed the time budget");
		}
		this.last.release();
		try {
			this.sleeper.sleep(delay);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return STOP;
		}
		return 0;
	}

	/**
	 * What the call returns once {@code RetryTemplate} has stopped retrying: the last
	 * response, or the exception of the last attempt.
	 */
	ClientHttpResponse outcome(RetryException exception) throws IOException {
		Throwable last = exception.getLastException();
		if (last instanceof RetryableResponse refused) {
			if (!refused.isReleased()) {
				return refused.response();
			}
			// released only when a wait began, and a wait ends in a retry unless interrupted
			InterruptedIOException interrupted = new InterruptedIOException(
					"Interrupted while waiting to retry " + describe());
			interrupted.initCause(exception);
			throw interrupted;
		}
		if (last instanceof IOException ex) {
			throw ex;
		}
		if (last instanceof RuntimeException ex) {
			throw ex;
		}
		if (last instanceof Error ex) {
			throw ex;
		}
		throw new IOException(last);
	}

	private long giveUp(String reason) {
		if (logger.isDebugEnabled()) {
			logger.debug("Not retrying " + describe() + " any more: " + reason);
		}
		return STOP;
	}

	private Instant now() {
		return Instant.EPOCH.plus(this.clock.nowMicros(), ChronoUnit.MICROS);
	}

	String describe() {
		// no user info and no query: they may carry credentials, and this ends up in logs
		java.net.URI uri = this.request.getURI();
		return this.request.getMethod() + " " + uri.getScheme() + "://" + uri.getHost()
				+ ((uri.getPort() != -1) ? ":" + uri.getPort() : "") + uri.getRawPath();
	}

}
