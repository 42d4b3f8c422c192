package io.github.ratelimit.sample;

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
		String phoneNumber = PhoneNumbers.normalize(request.phoneNumber());
		if (!PhoneNumbers.isValid(phoneNumber) || request.text() == null || request.text().isBlank()
				|| request.text().length() > 160) {
			return ResponseEntity.badRequest().build();
		}
		return ResponseEntity.ok(this.smsSender.send(phoneNumber, request.text()));
	}

	/**
	 * A text message to send.
	 *
	 * @param phoneNumber the recipient, an international number written in any of the
	 * ways {@link PhoneNumbers} understands
	 * @param text the message, at most 160 characters
	 */
	public record SmsRequest(String phoneNumber, String text) {

	}

}
