import Crypto
import Foundation
public import LabCore

/// The messaging flows.
public enum MessagingFlows {
    /// `login`, `lockout`, `captcha-guess`, `chat`, `rekey`, `password-change`.
    public static let all: [any Flow.Type] = [
        MessagingFlow<LoginScript>.self,
        MessagingFlow<LockoutScript>.self,
        MessagingFlow<CaptchaGuessScript>.self,
        MessagingFlow<ChatScript>.self,
        MessagingFlow<RekeyScript>.self,
        MessagingFlow<PasswordChangeScript>.self,
    ]
}
