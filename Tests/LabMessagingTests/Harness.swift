import Foundation
import LabBuiltIns
import LabCore
import LabMessaging
import LabTransports
import LabWire

/// A messaging service on a fresh SQLite file, served in process, with a virtual clock.
struct Harness {
    let directory: URL
    let store: MessagingStore
    let service: MessagingService
    let clock: VirtualClock
    let endpoint: any TransportEndpoint

    /// A cheap KDF keeps the tests about the policy, not about hashing.
    static let cheap = PasswordKDF.pbkdf2SHA256(iterations: 2)

    init(
        kdf: PasswordKDF = Harness.cheap,
        policy: LockoutPolicy = .default,
        captcha: CaptchaGenerator = .csprng,
        captchaCapacity: Int = 100_000,
        kdfWorkers: Int = MessagingOptions.defaultKDFWorkers,
        kdfQueueLimit: Int = 64,
        maxSessions: Int = 100_000,
        maxSessionsPerAccount: Int = 16
    ) async throws {
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("msg-test-" + UUID().uuidString)
        self.store = try MessagingStore(path: self.directory.appendingPathComponent("messaging.sqlite").path)
        self.clock = VirtualClock()
        self.service = MessagingService(
            store: self.store,
            options: MessagingOptions(
                kdf: kdf,
                policy: policy,
                captcha: captcha,
                captchaCapacity: captchaCapacity,
                kdfWorkers: kdfWorkers,
                kdfQueueLimit: kdfQueueLimit,
                maxSessions: maxSessions,
                maxSessionsPerAccount: maxSessionsPerAccount
            ),
            kinds: BuiltInPlugins.messagingKinds,
            clock: self.clock
        )
        self.endpoint = try await InProcessTransport(options: TransportOptions()).serve(self.service)
    }

    /// A client on a new connection.
    func client() async throws -> MessagingClient {
        var quiet = NoStepRecorder()
        return MessagingClient(connection: try await self.endpoint.connect(recorder: &quiet))
    }

    /// A registered user.
    func registered(_ name: String, password: String = "correct horse") async throws -> (MessagingUser, MessagingClient)
    {
        let client = try await self.client()
        var user = MessagingUser(username: name, password: password)
        var quiet = NoStepRecorder()
        try await user.register(client, recorder: &quiet).orThrow()
        return (user, client)
    }

    /// One login attempt with a correctly read captcha.
    static func attempt(
        _ user: inout MessagingUser,
        _ client: MessagingClient,
        password: String
    ) async throws -> Result<String, MsgFailure> {
        var quiet = NoStepRecorder()
        let captcha = try await user.solveCaptcha(client, recorder: &quiet)
        return try await user.login(client, password: password, captcha: captcha, recorder: &quiet)
    }

    /// The login state the policy judges `name`'s next attempt by, from this harness's
    /// clients (in process): read from the SQLite file for a real account under `seed`, from
    /// the service's login book otherwise.
    func state(_ name: String, from peer: FramePeer = .inProcess) async throws -> LoginState? {
        try await self.service.loginState(username: name, source: peer)
    }
}

extension Result {
    var failureCode: MsgErrorCode? {
        if case .failure(let failure as MsgFailure) = self { return failure.code }
        return nil
    }

    var succeeded: Bool {
        if case .success = self { return true }
        return false
    }
}
