package io.github.ratelimit.sample.reactive;

import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

/**
 * A reactive service calling a costly upstream: each subscription is one call, decided
 * when it subscribes, per signed-in user.
 */
@Service
class QuoteService {

	@RateLimited(name = "quotes", capacity = 3, period = "1m", key = KeySource.PRINCIPAL)
	public Mono<String> quote(String symbol) {
		return Mono.just("{\"symbol\":\"" + symbol + "\",\"price\":42}");
	}

}
