public import LabCore

extension Step {
    /// The server derives a password hash (register, login, password change).
    public static let kdf = Step("kdf")
    /// The client asks for a captcha (one round trip).
    public static let captcha = Step("captcha")
    /// The client creates an account: captcha answered, password sealed, one round trip.
    public static let register = Step("register")
    /// The client logs in: one round trip, the server's KDF included.
    public static let login = Step("login")
    /// The client changes its password: one round trip, two server KDF runs included.
    public static let passwordChange = Step("password-change")
    /// The client encrypts and sends one chat message.
    public static let send = Step("send")
    /// The client fetches new chat messages and decrypts them.
    public static let fetch = Step("fetch")
    /// The client re-encrypts a chat's whole history under a new key and the server stores it in one transaction.
    public static let rekey = Step("rekey")
    /// The server's write transaction of a rekey.
    public static let store = Step("store")
}

extension MsgOp {
    /// The step a request of this op counts its bytes under (`StepRecorder.transferred`): the
    /// timed step that sends it (`login`, `send`, …), or for an op no step times on its own
    /// (`publishKey`, `openChat`, …), the op's name in the reports' spelling (`publish-key`).
    public var step: Step {
        switch self {
        case .captcha: .captcha
        case .register: .register
        case .login: .login
        case .changePassword: .passwordChange
        case .send: .send
        case .fetch: .fetch
        case .rekey: .rekey
        case .publishKey: Step("publish-key")
        case .peerKey: Step("peer-key")
        case .openChat: Step("open-chat")
        case .logout: Step("logout")
        }
    }
}
