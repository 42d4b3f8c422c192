package io.github.ratelimit.sample.reactive;

import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * Quotes come from {@link QuoteService}, whose limit answers {@code 429} through this
 * handler.
 */
@RestController
class QuoteController {

	private final QuoteService quotes;

	QuoteController(QuoteService quotes) {
		this.quotes = quotes;
	}

	@GetMapping("/api/quotes/{symbol}")
	Mono<String> quote(@PathVariable String symbol) {
		return this.quotes.quote(symbol);
	}

}
