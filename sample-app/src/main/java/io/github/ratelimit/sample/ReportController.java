package io.github.ratelimit.sample;

import java.net.URI;
import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

/**
 * Reports: two endpoints sharing the {@code reports} limit with different costs.
 * Generating a report costs 25 units, reading one costs 1, out of 100 per minute and per
 * user: four reports a minute, or three reports and plenty of reads. A slow report holds
 * one of at most two permits per user while it runs: a limit on calls in flight, not on
 * their rate.
 */
@RestController
@RequestMapping("/api/reports")
public class ReportController {

	private static final int MAX_REPORTS = 10_000;

	private final Map<Long, Report> reports = new ConcurrentHashMap<>();

	private final AtomicLong ids = new AtomicLong();

	private final Duration slowReportTime;

	/**
	 * Creates the controller.
	 * @param slowReportTime how long a slow report takes ({@code sample.slow-report-time})
	 */
	public ReportController(@Value("${sample.slow-report-time:2s}") Duration slowReportTime) {
		this.slowReportTime = slowReportTime;
	}

	/**
	 * Runs a slow report, such as an export: at most two run at once per user, on every
	 * instance together when the store is Redis. A third gets 429 at once, with a short
	 * {@code Retry-After}; the permit comes back when a report ends, however it ends.
	 * @param principal the authenticated user
	 * @return what the report took
	 * @throws InterruptedException when the server stops during the report
	 */
	@RateLimited(name = "slow-reports", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "1m",
			key = KeySource.PRINCIPAL)
	@GetMapping("/slow")
	public String slowReport(Principal principal) throws InterruptedException {
		Thread.sleep(this.slowReportTime.toMillis());
		return "slow report for " + principal.getName() + " took " + this.slowReportTime.toMillis() + " ms\n";
	}

	/**
	 * Generates a report, the expensive operation.
	 * @param request what to report on
	 * @param principal the authenticated user
	 * @return the report
	 */
	@RateLimited(name = "reports", capacity = 100, period = "1m", cost = 25, key = KeySource.PRINCIPAL)
	@PostMapping
	public ResponseEntity<Report> generate(@RequestBody ReportRequest request, Principal principal) {
		if (this.reports.size() >= MAX_REPORTS) {
			// A demo store: starts afresh rather than grow without bound.
			this.reports.clear();
		}
		String type = (request.type() != null && !request.type().isBlank()) ? request.type() : "sales";
		Report report = new Report(this.ids.incrementAndGet(), principal.getName(), type, Instant.now());
		this.reports.put(report.id(), report);
		return ResponseEntity.created(URI.create("/api/reports/" + report.id())).body(report);
	}

	/**
	 * Reads a report, the cheap operation; it must agree with
	 * {@link #generate} on the limit itself and pays its own cost.
	 * @param id the report id
	 * @param principal the authenticated user
	 * @return the report, or 404 when it does not exist or belongs to someone else
	 */
	@RateLimited(name = "reports", capacity = 100, period = "1m", cost = 1, key = KeySource.PRINCIPAL)
	@GetMapping("/{id}")
	public ResponseEntity<Report> report(@PathVariable long id, Principal principal) {
		Report report = this.reports.get(id);
		if (report == null || !report.owner().equals(principal.getName())) {
			return ResponseEntity.notFound().build();
		}
		return ResponseEntity.ok(report);
	}

	/**
	 * A report to generate.
	 *
	 * @param type the kind of report, {@code sales} by default
	 */
	public record ReportRequest(String type) {

	}

	/**
	 * A generated report.
	 *
	 * @param id the report id
	 * @param owner the user who generated it
	 * @param type the kind of report
	 * @param createdAt when it was generated
	 */
	public record Report(long id, String owner, String type, Instant createdAt) {

	}

}
