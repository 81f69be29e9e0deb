import DataEngine
import InternalProtocol

/// Pub/sub's errors. Backendless keeps messaging in the 5000s; the contract names 5040 (cancel)
/// and the seed 5000, 5001, 5004 and 5030, so the rest are ours, each with a fitting status.
enum MessagingError {
    /// 5010, 400: a channel name that is empty, too long or has characters other than letters,
    /// digits, `_`, `-` and `.` (a `/` would be another path).
    static func invalidChannel(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5010, message: "Invalid channel name '\(name.prefix(64))': use 1 to 255 letters, digits, '_', '-' or '.'",
            status: 400)
    }

    /// 5011, 400: a publish or subscribe body that is not what the contract describes.
    static func invalidBody(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5011, message: message, status: 400)
    }

    /// 5012, 400: a subtopic that is not dot-separated tokens (or, subscribing, `*` wildcards).
    static func invalidSubtopic(_ text: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5012, message: "Invalid subtopic '\(text.prefix(64))': tokens of letters, digits, '_' or '-' separated by dots",
            status: 400)
    }

    /// 5013, 400: a selector that does not parse or is not a condition over headers.
    static func invalidSelector(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5013, message: "Invalid selector: \(message)", status: 400)
    }

    /// 5014, 404: no such subscription on this channel (never made, or expired after going unpolled).
    static func subscriptionNotFound(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5014, message: "Subscription '\(id.prefix(64))' does not exist", status: 404)
    }

    /// 5030, 400: a `publishAt` in the past (the seed's code).
    static let invalidPublishAt = ErrorEnvelope(code: 5030, message: "'publishAt' must not be in the past", status: 400)

    /// 5003, 400: a `repeatExpiresAt` not after the first occurrence (the seed's code).
    static let invalidRepeatExpiry = ErrorEnvelope(
        code: 5003, message: "'repeatExpiresAt' must be after the first publication", status: 400)

    /// 5040, 404: cancelling a message that is not scheduled (the contract's code).
    static func notScheduled(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5040, message: "Message '\(id.prefix(64))' is not scheduled (already published, cancelled or unknown)", status: 404)
    }

    /// 5015, 400: a publish option that is not available yet (push delivery).
    static func notSupportedYet(_ feature: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5015, message: "\(feature) is not supported yet", status: 400)
    }
}

extension MessagingError {
    /// A body member that is absent, null, or a string of at most `limit` bytes (5011 otherwise).
    static func optionalText(_ value: JSONValue?, _ name: String, upTo limit: Int) throws(ErrorEnvelope) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.utf8.count <= limit: return text
        default: throw invalidBody("'\(name)' must be a string of at most \(limit) bytes")
        }
    }
}

/// Channel names: 1 to 255 letters, digits, `_`, `-` or `.`.
enum ChannelName {
    static func validated(_ name: String) throws(ErrorEnvelope) -> String {
        guard (1...255).contains(name.utf8.count),
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") })
        else { throw MessagingError.invalidChannel(name) }
        return name
    }
}
