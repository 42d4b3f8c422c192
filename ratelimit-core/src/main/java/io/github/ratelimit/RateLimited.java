package io.github.ratelimit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits how often a method may be called, per identity. On a controller method the
 * rejection is a {@code 429 Too Many Requests}; on any other Spring bean it is a
 * {@link RateLimitExceededException}.
 * <p>
 * Values set under {@code ratelimit.policies.<name>} in the application's configuration
 * override the attributes of this annotation property by property. The annotation is
 * repeatable (for example a per-IP and a per-user limit on one method) and may be placed
 * on a type, where it applies to every public method of the bean.
 *
 * <pre class="code">
 * &#64;RateLimited(capacity = 100, period = "1m")
 * &#64;GetMapping("/orders/{id}")
 * Order order(&#64;PathVariable String id) { ... }
 * </pre>
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/**
	 * Alias of {@link #name()}; setting both to different names is an error.
	 * @return the limit name
	 */
	String value() default "";

	/**
	 * Name of the limit, which is also the policy looked up under
	 * {@code ratelimit.policies.<name>}. Limits with the same name share one bucket per
	 * identity. Empty means the canonical route of the handler ({@code GET /orders/{id}}),
	 * or {@code Class.method} outside web requests.
	 * @return the limit name
	 */
	String name() default "";

	/**
	 * Algorithm deciding the requests.
	 * @return the algorithm
	 */
	Algorithm algorithm() default Algorithm.TOKEN_BUCKET;

	/**
	 * Bucket size, or requests per window. 0 means "take it from the policy"; a limit
	 * that ends without a positive capacity fails at startup.
	 * @return the capacity
	 */
	long capacity() default 0;

	/**
	 * Tokens added per {@link #period()} for the bucket algorithms; 0 means
	 * {@link #capacity()}.
	 * @return the tokens added per period
	 */
	long refillTokens() default 0;

	/**
	 * Window length or refill period: {@code "1s"}, {@code "15m"}, {@code "PT1H"}.
	 * @return the period
	 */
	String period() default "1s";

	/**
	 * Quota units one call consumes.
	 * @return the cost
	 */
	long cost() default 1;

	/**
	 * What this limit's quota counts, when it is not requests: a lowercase token such as
	 * {@code "tokens"} or {@code "content-bytes"}, which the {@code RateLimit-Policy} header
	 * gives as its quota unit ({@code qu="tokens"}), so that clients read {@code q} and
	 * {@code r} in it. Empty means "take it from the policy" (requests when the policy sets
	 * none either). A {@link Algorithm#CONCURRENCY} limit always counts
	 * {@code concurrent-requests}.
	 * <pre class="code">
	 * &#64;RateLimited(name = "completion-tokens", capacity = 100_000, period = "1m", cost = 500, unit = "tokens")
	 * </pre>
	 * @return the quota unit
	 */
	String unit() default "";

	/**
	 * Key sources tried in order; the first one available for the request wins. Empty
	 * means {@code ratelimit.default-key}.
	 * @return the key chain
	 */
	KeySource[] key() default {};

	/**
	 * SpEL expression over the method arguments by name (plus {@code #request} in web
	 * requests) whose value is the identity, for example {@code "#username"}. When set it
	 * replaces {@link #key()}.
	 * @return the key expression
	 */
	String keyExpression() default "";

	/**
	 * Longest time a call waits for a permit instead of being rejected, as a duration
	 * ({@code "2s"}, {@code "500ms"}); a call is only rejected when its wait would take
	 * longer. Empty means "take it from the policy" (no waiting when the policy sets none
	 * either), {@code "0"} means never wait. Token and leaky buckets reserve each caller's
	 * slot, so waiting callers are released in order one token apart; methods returning a
	 * {@code CompletionStage} wait without holding a thread. A controller method waits only
	 * when its own annotation sets this: a route limit in {@code ratelimit.routes} never
	 * waits.
	 * @return the longest wait
	 */
	String maxWait() default "";

	/**
	 * Calendar unit whose windows this limit counts: {@link CalendarPeriod#DAY},
	 * {@link CalendarPeriod#WEEK} (from Monday) or {@link CalendarPeriod#MONTH}, each
	 * starting at local midnight in {@link #timeZone()}. A calendar quota is a
	 * {@link Algorithm#FIXED_WINDOW fixed window} (the algorithm need not be set) and takes
	 * no {@link #period()}. {@link CalendarPeriod#NONE} means "take it from the policy"
	 * (windows of the period when the policy sets none either).
	 * <pre class="code">
	 * &#64;RateLimited(capacity = 10_000, calendar = CalendarPeriod.DAY, timeZone = "Europe/Berlin")
	 * </pre>
	 * @return the calendar unit
	 */
	CalendarPeriod calendar() default CalendarPeriod.NONE;

	/**
	 * Time zone of a {@link #calendar()} quota, whose local midnight starts its windows: a
	 * region such as {@code "Europe/Berlin"} or an offset such as {@code "+02:00"}. Empty
	 * means "take it from the policy" (UTC when the policy sets none either).
	 * @return the time zone id
	 */
	String timeZone() default "";

	/**
	 * Final HTTP response statuses that count against this limit, as codes or classes:
	 * {@code {"401", "403"}}, {@code "4xx"}, {@code "5xx"}. The permit is taken before the
	 * handler runs, as always, and given back once the response is final when its status
	 * is not one of these (including statuses written by Spring Security, exception
	 * handlers and error pages). Empty means "take it from the policy" (every request
	 * counts when the policy sets none either). Applies to web handler methods; other
	 * beans count by {@link #countExceptions()} and {@link #countWhen()}.
	 * <pre class="code">
	 * &#64;RateLimited(name = "failed-logins", capacity = 5, period = "15m", countStatuses = "401")
	 * </pre>
	 * @return the counted statuses
	 */
	String[] countStatuses() default {};

	/**
	 * Exceptions that count against this limit when a call throws one of them (or a
	 * subclass); {@code Throwable.class} counts any exception. The permit is taken before
	 * the call and given back after it when the call's outcome does not count: with only
	 * this set, a call that returns, or throws another exception, is given back its
	 * permit. Empty (with {@link #countWhen()} empty too) means every call counts. Applies
	 * to calls of beans that are not web handlers, whose outcome is their response status
	 * ({@link #countStatuses()}).
	 * @return the counted exception types
	 */
	Class<? extends Throwable>[] countExceptions() default {};

	/**
	 * SpEL condition over the value a call returned ({@code #result}) and its arguments by
	 * name that says whether the call counts against this limit, for example
	 * {@code "#result == false"}. A call that returns and for which this is not
	 * {@code true} is given back its permit; a call that throws counts only when
	 * {@link #countExceptions()} names its exception. Empty means returned values do not
	 * decide (every call counts when {@link #countExceptions()} is empty too). Applies to
	 * calls of beans that are not web handlers, as {@link #countExceptions()}.
	 * @return the condition
	 */
	String countWhen() default "";

	/**
	 * SpEL expression over the method arguments by name (plus {@code #request} in web
	 * requests) whose value, a whole number not below 0, is the cost this call reserves
	 * when it starts, for example {@code "#body.maxTokens"}. The reservation is settled
	 * against the actual cost once the call ends ({@link #actualCost()},
	 * {@link #actualCostHeader()}, or {@link RateLimitUsage#report(long)}): the difference
	 * is given back, or charged, beyond what is left, as debt. An estimate above the
	 * capacity reserves the whole capacity, and one of 0 reserves 1, the least a decision
	 * takes. Empty means "take it from the policy" ({@link #cost()} is the reservation
	 * when the policy sets none either). Not for {@link Algorithm#CONCURRENCY} limits.
	 * @return the estimate expression
	 */
	String estimate() default "";

	/**
	 * SpEL expression over the value the call returned ({@code #result}; for a
	 * {@code Mono} or a {@code CompletionStage}, the value it completed with; for a
	 * {@code Flux}, the last element it emitted, as the final chunk of a streamed chat
	 * completion carries its usage) and its
	 * arguments by name whose value, a whole number not below 0, is the call's actual
	 * cost, for example {@code "#result.usage.totalTokens"}. Evaluated when the call ends;
	 * a cost reported through {@link RateLimitUsage} or a response header
	 * ({@link #actualCostHeader()}) wins over it. Empty means "take it from the policy".
	 * Not for {@link Algorithm#CONCURRENCY} limits.
	 * <pre class="code">
	 * &#64;RateLimited(name = "tokens", capacity = 100_000, period = "1m",
	 *         estimate = "#body.maxTokens", actualCost = "#result.usage.totalTokens")
	 * </pre>
	 * @return the actual cost expression
	 */
	String actualCost() default "";

	/**
	 * Name of a response header carrying the call's actual cost as a whole number, read
	 * when the response is final; web handlers only. A cost reported through
	 * {@link RateLimitUsage} wins over it, and it wins over {@link #actualCost()}. Empty
	 * means "take it from the policy". Not for {@link Algorithm#CONCURRENCY} limits.
	 * @return the header name
	 */
	String actualCostHeader() default "";

	/**
	 * Container of repeated {@link RateLimited} annotations.
	 */
	@Target({ ElementType.METHOD, ElementType.TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		/**
		 * The repeated annotations.
		 * @return the annotations
		 */
		RateLimited[] value();

	}

}
