package io.github.ratelimit.sample;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.annotation.JsonProperty;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.RateLimited;

/**
 * A chat completion endpoint shaped like OpenAI's, limited per tenant (the
 * {@code X-Tenant-Id} header) to requests per minute, tokens per minute and tokens per
 * calendar month ({@code chat-requests}, {@code chat-tokens}, {@code chat-tokens-monthly}
 * in {@code application.yml}). A call's tokens are known only once the model has answered:
 * each call reserves its prompt plus {@code max_tokens} when it starts, and settles the
 * tokens it used when it ends. The "model" needs no network: it echoes the last user
 * message, one token per word.
 */
@RestController
@RequestMapping("/v1/chat/completions")
public class ChatCompletionController {

	/** Largest {@code max_tokens} a call may ask for, which bounds what it reserves. */
	static final int MAX_TOKENS = 4096;

	/** What an answer may have when the request does not say. */
	static final int DEFAULT_MAX_TOKENS = 256;

	private final AtomicLong ids = new AtomicLong();

	private final AsyncTaskExecutor executor;

	/**
	 * Creates the controller.
	 * @param executor runs the streams, off the request thread
	 */
	public ChatCompletionController(@Qualifier("applicationTaskExecutor") AsyncTaskExecutor executor) {
		this.executor = executor;
	}

	/**
	 * Answers a chat completion in one piece. Its {@code usage.total_tokens} is what the
	 * token limits settle ({@code actualCost}); a request asking for a stream here is
	 * refused after the limits took their estimate, and reports 0 tokens to give it back.
	 * @param tenant the tenant id, required: the limits are per tenant
	 * @param body the request
	 * @param usage where a call reports what it cost
	 * @return the completion
	 */
	@RateLimited("chat-requests")
	@RateLimited(name = "chat-tokens", actualCost = "#result.usage.totalTokens")
	@RateLimited(name = "chat-tokens-monthly", actualCost = "#result.usage.totalTokens")
	@PostMapping(produces = MediaType.APPLICATION_JSON_VALUE)
	public ChatCompletion complete(@RequestHeader("X-Tenant-Id") String tenant, @RequestBody ChatRequest body,
			RateLimitUsage usage) {
		if (body.stream()) {
			// nothing was generated: give back what the call reserved
			usage.report(0);
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"streamed completions are at POST /v1/chat/completions/stream");
		}
		Answer answer = Answer.to(body);
		return new ChatCompletion("chatcmpl-" + this.ids.incrementAndGet(), "chat.completion", body.model(),
				List.of(new Choice(0, new Message("assistant", answer.content()), answer.finish())), answer.usage());
	}

	/**
	 * Streams a chat completion as server-sent events, one word a chunk, then a chunk
	 * with the usage and {@code [DONE]}. The tokens are known only once the stream has
	 * ended: it reports them to its {@link RateLimitUsage} before completing, or what it
	 * generated until the client went away.
	 * @param tenant the tenant id, required: the limits are per tenant
	 * @param body the request
	 * @param usage where the stream reports what it cost
	 * @return the event stream
	 */
	@RateLimited("chat-requests")
	@RateLimited("chat-tokens")
	@RateLimited("chat-tokens-monthly")
	@PostMapping(path = "/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	public SseEmitter stream(@RequestHeader("X-Tenant-Id") String tenant, @RequestBody ChatRequest body,
			RateLimitUsage usage) {
		String id = "chatcmpl-" + this.ids.incrementAndGet();
		Answer answer = Answer.to(body);
		SseEmitter emitter = new SseEmitter();
		this.executor.execute(() -> {
			int sent = 0;
			try {
				for (String word : answer.words()) {
					emitter.send(SseEmitter.event()
						.data(new Chunk(id, "chat.completion.chunk", body.model(),
								List.of(new ChunkChoice(0, new Delta(word + " "), null)), null),
								MediaType.APPLICATION_JSON));
					sent++;
				}
				emitter.send(SseEmitter.event()
					.data(new Chunk(id, "chat.completion.chunk", body.model(),
							List.of(new ChunkChoice(0, new Delta(""), answer.finish())), null),
							MediaType.APPLICATION_JSON));
				emitter.send(SseEmitter.event()
					.data(new Chunk(id, "chat.completion.chunk", body.model(), List.of(), answer.usage()),
							MediaType.APPLICATION_JSON));
				emitter.send(SseEmitter.event().data("[DONE]"));
				// what the stream used, before it ends
				usage.report(answer.usage().totalTokens());
				emitter.complete();
			}
			catch (Exception ex) {
				// the client went away: it pays for what was generated until then
				usage.report(answer.usage().promptTokens() + sent);
				emitter.completeWithError(ex);
			}
		});
		return emitter;
	}

	/**
	 * Answers a request the model cannot take (its {@code max_tokens} out of range, no
	 * messages) with 400 and why. The body is checked as it is read, before the limits
	 * are decided: it reserves nothing, and an oversized {@code max_tokens} is not
	 * mistaken for a call that needs more tokens than are left.
	 * @param ex the unreadable or invalid body
	 * @return the problem
	 */
	@ExceptionHandler(HttpMessageNotReadableException.class)
	ProblemDetail invalidRequest(HttpMessageNotReadableException ex) {
		Throwable cause = ex.getMostSpecificCause();
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
				(cause instanceof IllegalArgumentException) ? cause.getMessage() : "unreadable request body");
	}

	/**
	 * Answers a request this controller refused with its status and why.
	 * @param ex the refusal
	 * @return the problem
	 */
	@ExceptionHandler(ResponseStatusException.class)
	ProblemDetail refused(ResponseStatusException ex) {
		return ex.getBody();
	}

	/**
	 * A chat completion request.
	 *
	 * @param model the model name, only repeated in the answer
	 * @param messages the conversation
	 * @param maxTokens most tokens the answer may have, 1 to 4096; 256 when not given
	 * @param stream whether the answer is streamed, which only the {@code /stream} path does
	 */
	public record ChatRequest(String model, List<Message> messages, @JsonProperty("max_tokens") Integer maxTokens,
			Boolean stream) {

		/**
		 * Fills in what the request left out.
		 */
		public ChatRequest {
			maxTokens = (maxTokens != null) ? maxTokens : DEFAULT_MAX_TOKENS;
			if (maxTokens < 1 || maxTokens > MAX_TOKENS) {
				throw new IllegalArgumentException("max_tokens must be between 1 and " + MAX_TOKENS + ": " + maxTokens);
			}
			if (messages == null || messages.isEmpty()) {
				throw new IllegalArgumentException("messages must not be empty");
			}
			stream = Boolean.TRUE.equals(stream);
		}

		/**
		 * Tokens of the prompt: one per word of the messages.
		 * @return the prompt tokens
		 */
		public int promptTokens() {
			return (this.messages != null)
					? this.messages.stream().mapToInt((message) -> words(message.content()).size()).sum() : 0;
		}

	}

	/**
	 * One message of a conversation.
	 *
	 * @param role {@code system}, {@code user} or {@code assistant}
	 * @param content the text
	 */
	public record Message(String role, String content) {

	}

	/**
	 * A chat completion.
	 *
	 * @param id the completion id
	 * @param object always {@code chat.completion}
	 * @param model the model asked for
	 * @param choices the one answer
	 * @param usage the tokens the call used
	 */
	public record ChatCompletion(String id, String object, String model, List<Choice> choices, Usage usage) {

	}

	/**
	 * An answer of a completion.
	 *
	 * @param index its position
	 * @param message the answer
	 * @param finishReason {@code stop}, or {@code length} when {@code max_tokens} cut it
	 */
	public record Choice(int index, Message message, @JsonProperty("finish_reason") String finishReason) {

	}

	/**
	 * Tokens a call used.
	 *
	 * @param promptTokens tokens of the prompt
	 * @param completionTokens tokens of the answer
	 * @param totalTokens both together, what the token limits settle
	 */
	public record Usage(@JsonProperty("prompt_tokens") int promptTokens,
			@JsonProperty("completion_tokens") int completionTokens, @JsonProperty("total_tokens") int totalTokens) {

	}

	/**
	 * A chunk of a streamed completion.
	 *
	 * @param id the completion id
	 * @param object always {@code chat.completion.chunk}
	 * @param model the model asked for
	 * @param choices the next piece of the answer; none in the last chunk
	 * @param usage the tokens the call used, in the last chunk only
	 */
	public record Chunk(String id, String object, String model, List<ChunkChoice> choices, Usage usage) {

	}

	/**
	 * A piece of a streamed answer.
	 *
	 * @param index its position
	 * @param delta the text it adds
	 * @param finishReason set in the answer's last piece
	 */
	public record ChunkChoice(int index, Delta delta, @JsonProperty("finish_reason") String finishReason) {

	}

	/**
	 * Text a chunk adds.
	 *
	 * @param content the text
	 */
	public record Delta(String content) {

	}

	/** What the deterministic model answers: "You said:" and the last user message. */
	private record Answer(List<String> words, String finish, Usage usage) {

		static Answer to(ChatRequest request) {
			String last = "";
			for (Message message : request.messages()) {
				if ("user".equals(message.role())) {
					last = message.content();
				}
			}
			List<String> all = new ArrayList<>(List.of("You", "said:"));
			all.addAll(ChatCompletionController.words(last));
			List<String> words = all.subList(0, Math.min(all.size(), request.maxTokens()));
			int prompt = request.promptTokens();
			return new Answer(List.copyOf(words), (words.size() < all.size()) ? "length" : "stop",
					new Usage(prompt, words.size(), prompt + words.size()));
		}

		String content() {
			return String.join(" ", this.words);
		}

	}

	static List<String> words(String text) {
		return (text == null || text.isBlank()) ? List.of() : Arrays.asList(text.trim().split("\\s+"));
	}

}
