package io.github.ratelimit.e2e;

import java.util.concurrent.Semaphore;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.RateLimited;

/**
 * The reactive twins of {@link SettlingHandlers}: token limits reserving an estimate (read
 * from query parameters, before the handler's arguments are resolved) and settling the
 * actual cost as the response commits, or for a stream as it ends.
 */
@RestController
class ReactiveSettlingHandlers {

	/** Released once for each stream its client cancelled. */
	static final Semaphore CANCELLED = new Semaphore(0);

	@RateLimited(name = "settled-requests", capacity = 100, period = "1h", key = KeySource.GLOBAL)
	@RateLimited(name = "settled-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#maxTokens", actualCost = "#result.totalTokens")
	@PostMapping("/completions")
	Mono<SettlingHandlers.Completion> complete(@RequestParam long maxTokens, @RequestParam long used) {
		return Mono.fromSupplier(() -> new SettlingHandlers.Completion(used));
	}

	@RateLimited(name = "header-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate", actualCostHeader = "X-Tokens-Used")
	@GetMapping("/costs/header")
	Mono<ResponseEntity<String>> header(@RequestParam long estimate, @RequestParam long used) {
		return Mono.just(ResponseEntity.ok().header("X-Tokens-Used", Long.toString(used)).body("used " + used));
	}

	@RateLimited(name = "reported-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping("/costs/reported")
	Mono<String> reported(@RequestParam long estimate, @RequestParam long used, RateLimitUsage usage) {
		usage.report(used);
		return Mono.just("used " + used);
	}

	@RateLimited(name = "context-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping("/costs/context")
	Mono<String> context(@RequestParam long estimate, @RequestParam long used) {
		return Mono.deferContextual((context) -> {
			context.get(RateLimitUsage.class).report(used);
			return Mono.just("used " + used);
		});
	}

	@RateLimited(name = "stream-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping(path = "/costs/stream/lines", produces = MediaType.APPLICATION_NDJSON_VALUE)
	Flux<Chunk> lines(@RequestParam long estimate, @RequestParam int chunks, @RequestParam long used) {
		return Flux.deferContextual((context) -> {
			RateLimitUsage usage = context.get(RateLimitUsage.class);
			return Flux.range(1, chunks).map((i) -> new Chunk("part " + i, 0)).doOnComplete(() -> usage.report(used));
		});
	}

	@RateLimited(name = "held-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping(path = "/costs/stream/held", produces = MediaType.APPLICATION_NDJSON_VALUE)
	Flux<Chunk> held(@RequestParam long estimate, @RequestParam int chunks, @RequestParam long perChunk,
			@RequestParam boolean hold) {
		return Flux.deferContextual((context) -> {
			RateLimitUsage usage = context.get(RateLimitUsage.class);
			// what each chunk cost is reported before the client gets it
			Flux<Chunk> sent = Flux.range(1, chunks).map((i) -> {
				usage.report(i * perChunk);
				return new Chunk("part " + i, i * perChunk);
			});
			// held open until the client goes away
			return (hold ? sent.concatWith(Flux.never()) : sent).doOnCancel(CANCELLED::release);
		});
	}

	@RateLimited(name = "event-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate", actualCost = "#result.data().totalTokens")
	@GetMapping(path = "/costs/stream/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	Flux<ServerSentEvent<Chunk>> events(@RequestParam long estimate, @RequestParam int chunks,
			@RequestParam long used) {
		// the last event carries the usage, as a streamed chat completion's final chunk does
		return Flux.range(1, chunks)
			.map((i) -> ServerSentEvent.builder(new Chunk("part " + i, (i == chunks) ? used : 0)).build());
	}

	/** A part of a streamed answer; the last one says how many tokens the whole used. */
	record Chunk(String text, long totalTokens) {
	}

}
