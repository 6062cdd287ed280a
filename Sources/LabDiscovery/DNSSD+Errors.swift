package import CLabDNSSD
package import LabCore

extension DNSSD {
    static let noError = DNSServiceErrorType(kDNSServiceErr_NoError)
    static let unknownError = DNSServiceErrorType(kDNSServiceErr_Unknown)

    // Apple's codes that Avahi's header lacks; mDNSResponder returns them.
    private static let serviceNotRunning: DNSServiceErrorType = -65563
    private static let extraNames: [DNSServiceErrorType: String] = [
        -65560: "BadSig", -65561: "BadKey", -65562: "Transient", -65563: "ServiceNotRunning",
        -65564: "NATPortMappingUnsupported", -65565: "NATPortMappingDisabled", -65566: "NoRouter",
        -65567: "PollingMode", -65568: "Timeout",
    ]

    /// `kDNSServiceErr_<Name> (<code>)`.
    package static func errorName(_ code: DNSServiceErrorType) -> String {
        let name: String? =
            switch Int(code) {
            case kDNSServiceErr_NoError: "NoError"
            case kDNSServiceErr_Unknown: "Unknown"
            case kDNSServiceErr_NoSuchName: "NoSuchName"
            case kDNSServiceErr_NoMemory: "NoMemory"
            case kDNSServiceErr_BadParam: "BadParam"
            case kDNSServiceErr_BadReference: "BadReference"
            case kDNSServiceErr_BadState: "BadState"
            case kDNSServiceErr_BadFlags: "BadFlags"
            case kDNSServiceErr_Unsupported: "Unsupported"
            case kDNSServiceErr_NotInitialized: "NotInitialized"
            case kDNSServiceErr_AlreadyRegistered: "AlreadyRegistered"
            case kDNSServiceErr_NameConflict: "NameConflict"
            case kDNSServiceErr_Invalid: "Invalid"
            case kDNSServiceErr_Firewall: "Firewall"
            case kDNSServiceErr_Incompatible: "Incompatible"
            case kDNSServiceErr_BadInterfaceIndex: "BadInterfaceIndex"
            case kDNSServiceErr_Refused: "Refused"
            case kDNSServiceErr_NoSuchRecord: "NoSuchRecord"
            case kDNSServiceErr_NoAuth: "NoAuth"
            case kDNSServiceErr_NoSuchKey: "NoSuchKey"
            case kDNSServiceErr_NATTraversal: "NATTraversal"
            case kDNSServiceErr_DoubleNAT: "DoubleNAT"
            case kDNSServiceErr_BadTime: "BadTime"
            default: Self.extraNames[code]
            }
        return "kDNSServiceErr_\(name ?? "?") (\(code))"
    }

    /// The `LabError` for a dns_sd error `code` returned or reported by `call` about `subject`.
    ///
    /// Avahi reports an unreachable daemon (no avahi-daemon, no D-Bus system bus) as
    /// `kDNSServiceErr_Unknown`; mDNSResponder as `kDNSServiceErr_ServiceNotRunning`.
    package static func failure(_ code: DNSServiceErrorType, during call: String, subject: String) -> LabError {
        let cause = UnderlyingError(Self.errorName(code))
        switch Int(code) {
        case kDNSServiceErr_Unknown, Int(Self.serviceNotRunning), kDNSServiceErr_NotInitialized,
            kDNSServiceErr_Incompatible:
            return LabError(
                .discoveryFailed,
                "\(call) for \(subject) failed with \(Self.errorName(code)): the mDNS daemon is not reachable; "
                    + "is avahi-daemon (and the D-Bus system bus) running? scripts/services.sh starts it",
                cause: cause
            )
        case kDNSServiceErr_BadParam, kDNSServiceErr_Invalid, kDNSServiceErr_Unsupported,
            kDNSServiceErr_BadFlags, kDNSServiceErr_BadInterfaceIndex:
            return LabError(
                .invalidScenario,
                "\(call) rejected \(subject) with \(Self.errorName(code)): check the service type "
                    + "(like \(Self.defaultType)) and the instance name",
                cause: cause
            )
        case kDNSServiceErr_NameConflict, kDNSServiceErr_AlreadyRegistered:
            return LabError(
                .discoveryFailed,
                "\(call) for \(subject) failed with \(Self.errorName(code)): the name is taken; choose another",
                cause: cause
            )
        default:
            return LabError(
                .discoveryFailed,
                "\(call) for \(subject) failed with \(Self.errorName(code)); "
                    + "`avahi-browse -rt \(Self.defaultType)` shows what avahi-daemon sees",
                cause: cause
            )
        }
    }
}
