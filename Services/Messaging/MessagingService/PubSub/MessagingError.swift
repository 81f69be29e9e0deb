import DataEngine
import InternalProtocol
import ServiceRuntime

/// Pub/sub's errors. Backendless keeps messaging in the 5000s; the contract names 5040 (cancel)
/// and the seed 5000, 5001, 5004 and 5030, so the rest are ours, each with a fitting status.
enum MessagingError {
    /// 5010, 400: a channel name that is empty, too long or has characters other than letters,
    /// digits, `_`, `-` and `.` (a `/` would be another path).
    static func invalidChannel(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5010,
            message: "Invalid channel name '\(name.prefix(64))': use 1 to 255 letters, digits, '_', '-' or '.'",
            status: 400)
    }

    /// 5011, 400: a publish or subscribe body that is not what the contract describes.
    static func invalidBody(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5011, message: message, status: 400)
    }

    /// 5012, 400: a subtopic that is not dot-separated tokens (or, subscribing, `*` wildcards).
    static func invalidSubtopic(_ text: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5012,
            message: "Invalid subtopic '\(text.prefix(64))': tokens of letters, digits, '_' or '-' separated by dots",
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
        ErrorEnvelope(
            code: 5040,
            message: "Message '\(id.prefix(64))' is not scheduled (already published, cancelled or unknown)",
            status: 404)
    }

    /// 5041, 403: cancelling a publish another user scheduled.
    static func notYourSchedule(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5041,
            message:
                "Message '\(id.prefix(64))' was scheduled by another user: only that user or the server-code key may cancel it",
            status: 403)
    }

    /// 5007, 403: publishing to a channel the caller may not publish to (the seed's code).
    static func publishDenied(_ channel: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5007, message: "User does not have the permission to publish messages to channel '\(channel)'",
            status: 403)
    }

    /// 5016, 403: subscribing to (or polling) a channel the caller may not subscribe to.
    static func subscribeDenied(_ channel: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 5016, message: "User does not have the permission to subscribe to channel '\(channel)'", status: 403)
    }

    /// 4000, 403: a messaging setting or permission changed without the server-code key.
    static func serverCodeRequired(_ what: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4000, message: "\(what) needs the server-code key", status: 403)
    }

    /// 5000 (reading) or 5001 (`cancelling`), 404: a device with no live registration (the seed's codes).
    static func unknownDevice(_ deviceId: String, cancelling: Bool = false) -> ErrorEnvelope {
        ErrorEnvelope(
            code: cancelling ? 5001 : 5000,
            message:
                "Unable to \(cancelling ? "cancel" : "retrieve") device registration - unknown device ID '\(deviceId.prefix(64))'",
            status: 404)
    }

    /// 5018, 403: registering a device id another user's live registration holds.
    static func deviceRegisteredByAnother(_ deviceId: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5018, message: "Device '\(deviceId.prefix(64))' is registered by another user", status: 403)
    }

    /// 5019, 404: a push template that does not exist.
    static func unknownPushTemplate(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 5019, message: "Push template '\(name.prefix(255))' does not exist", status: 404)
    }

    /// 5004, 400: a registration expiration that is not in the future (the seed's code).
    static let invalidExpiration = ErrorEnvelope(
        code: 5004, message: "Invalid expiration date. The expiration date must be after the current time.", status: 400
    )

    /// 8000, 400: a value longer than its limit (the seed's code for registrations).
    static func valueTooLong(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 8000, message: "'\(name)' exceeds the length limit", status: 400)
    }

    /// 5017, 503: push credentials cannot be stored or opened without `BAAS_SECRETS_KEY`.
    static let secretsKeyMissing = ErrorEnvelope(
        code: 5017, message: "Push credentials need BAAS_SECRETS_KEY to be configured on messaging-service", status: 503
    )
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

/// Channel names: 1 to 255 letters, digits, `_`, `-` or `.`, other than the words of the
/// messaging API's own paths.
enum ChannelName {
    /// `messaging/{word}` paths of the API: a channel of that name could not be published to or polled.
    static let reserved: Set<String> = ["email", "registrations", "settings", "channels", "push", "pushtemplates"]

    /// The container whose PUBLISH cells decide who may send email with a client key
    /// (``ChannelAccess/requireEmail(_:what:)``); no channel has its name.
    static let email = "email"

    /// A name whose permission cells may be set: a channel's, or ``email``.
    static func permissionContainer(_ name: String) throws(ErrorEnvelope) -> String {
        name.lowercased() == email ? email : try validated(name)
    }

    /// `name` when it is a channel name; `allowingReserved` lets the reserved words through
    /// (deleting a channel made before they were reserved).
    static func validated(_ name: String, allowingReserved: Bool = false) throws(ErrorEnvelope) -> String {
        guard (1...255).contains(name.utf8.count),
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") })
        else { throw MessagingError.invalidChannel(name) }
        guard allowingReserved || !reserved.contains(name.lowercased()) else {
            throw ErrorEnvelope(
                code: 5010, message: "'\(name)' is a path of the messaging API, not a channel name", status: 400)
        }
        return name
    }
}

extension PublicCall {
    /// 4000 (``MessagingError/serverCodeRequired(_:)``) unless the call uses the server-code key.
    func requireServerCode(for what: String) throws(ErrorEnvelope) {
        guard identity.keyKind == .serverCode else { throw MessagingError.serverCodeRequired(what) }
    }
}
