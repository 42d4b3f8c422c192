package io.github.ratelimit.benchmarks.overload;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The benchmark's settings, under {@code bench.}.
 *
 * @param protection what stands in front of the handler: {@code none}, {@code fixed},
 * {@code netflix} or {@code ours}
 * @param base how long a call to the dependency takes at or below the knee
 * @param knee how many calls in flight the dependency serves at full speed
 * @param fixedLimit the concurrency limit of the {@code fixed} variant, the knee unless set
 * @param netflix the {@code netflix} variant's limiter
 */
@ConfigurationProperties("bench")
record BenchSettings(@DefaultValue("none") String protection, @DefaultValue("20ms") Duration base,
		@DefaultValue("16") int knee, @DefaultValue("0") int fixedLimit, @DefaultValue Netflix netflix) {

	/**
	 * The {@code netflix} variant's limiter.
	 *
	 * @param algorithm {@code vegas} (the library's default), {@code gradient2} or {@code aimd},
	 * each with the library's default settings
	 * @param criticalShare the share of the limit reserved for the {@code critical} partition;
	 * {@code sheddable} gets the rest
	 */
	record Netflix(@DefaultValue("vegas") String algorithm, @DefaultValue("0.8") double criticalShare) {
	}

	/**
	 * The fixed variant's limit.
	 * @return {@code fixedLimit}, or the knee when it is not set
	 */
	int effectiveFixedLimit() {
		return (this.fixedLimit > 0) ? this.fixedLimit : this.knee;
	}

}
