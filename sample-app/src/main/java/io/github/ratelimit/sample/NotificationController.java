package io.github.ratelimit.sample;

import java.util.regex.Pattern;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Sends text messages. The controller itself has no limit: {@link SmsSender} has, and its
 * rejection still becomes a 429.
 */
@RestController
public class NotificationController {

	private static final Pattern PHONE_NUMBER = Pattern.compile("\\+?[0-9]{6,15}");

	private final SmsSender smsSender;

	NotificationController(SmsSender smsSender) {
		this.smsSender = smsSender;
	}

	/**
	 * Sends a text message.
	 * @param request the recipient and the text
	 * @return the gateway's receipt, or 400 for an invalid request
	 */
	@PostMapping("/api/notifications/sms")
	public ResponseEntity<SmsSender.Receipt> sms(@RequestBody SmsRequest request) {
		if (request.phoneNumber() == null || !PHONE_NUMBER.matcher(request.phoneNumber()).matches()
				|| request.text() == null || request.text().isBlank() || request.text().length() > 160) {
			return ResponseEntity.badRequest().build();
		}
		return ResponseEntity.ok(this.smsSender.send(request.phoneNumber(), request.text()));
	}

	/**
	 * A text message to send.
	 *
	 * @param phoneNumber the recipient, digits with an optional leading {@code +}
	 * @param text the message, at most 160 characters
	 */
	public record SmsRequest(String phoneNumber, String text) {

	}

}
