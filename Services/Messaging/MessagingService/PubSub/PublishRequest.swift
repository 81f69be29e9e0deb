import DataEngine
import InternalProtocol

/// A publish body (contract §6): `message` (any JSON), `publisherId`, `headers` (names to
/// strings, numbers or booleans), `subtopic`, and the delivery options; the JS SDK sends its
/// options flat in the body with keys of its own, which are ignored.
struct PublishRequest: Sendable {
    let message: JSONValue
    let publisherId: String?
    let headers: JSONObject
    let subtopic: String?
    /// When to publish (epoch ms), how often to repeat (ms) and until when (epoch ms); nil
    /// when the message is published at once.
    let schedule: Schedule?
    /// Whether subscribers get it and which devices are pushed it.
    let delivery: PushOptions

    /// A delayed or repeating publish.
    struct Schedule: Sendable, Equatable {
        let publishAt: Int64
        let repeatEvery: Int64?
        let repeatExpiresAt: Int64?
    }

    /// The most headers one message may carry.
    static let maximumHeaders = 256

    /// Reads `body`; 5011 for malformed members (a header FCM refuses when Android devices may
    /// be pushed), 5012 for a subtopic, 5013 for a segment query, 5030 and 5003 for schedule times.
    init(_ body: JSONValue?, now: Int64 = MessageStore.now()) throws(ErrorEnvelope) {
        guard let object = body?.object else {
            throw MessagingError.invalidBody("The body must be a JSON object with 'message'")
        }
        message = object["message"] ?? .null
        publisherId = try Self.text(object["publisherId"], "publisherId")
        headers = try Self.headers(object["headers"])
        if let text = try Self.text(object["subtopic"], "subtopic") {
            guard Subtopic(text, wildcards: false) != nil else { throw MessagingError.invalidSubtopic(text) }
            subtopic = text
        } else {
            subtopic = nil
        }
        delivery = try PushOptions(object)
        if delivery.targets?.systems.contains(.android) == true, let reserved = PushPayloads.reservedForFCM(headers) {
            throw MessagingError.invalidBody(
                "Header '\(reserved.prefix(64))' is reserved by FCM and cannot be pushed to Android devices")
        }
        schedule = try Self.schedule(object, now: now)
    }

    /// `publishAt` (5030 unless a time from now on), `repeatEvery` (whole seconds, at least 1:
    /// 5011) and `repeatExpiresAt` (5003 unless after the first occurrence); nil when none is set.
    private static func schedule(_ object: JSONObject, now: Int64) throws(ErrorEnvelope) -> Schedule? {
        let publishAt = try integer(object["publishAt"])
        let every = try integer(object["repeatEvery"])
        let expires = try integer(object["repeatExpiresAt"])
        guard publishAt != nil || every != nil else {
            if expires != nil { throw MessagingError.invalidBody("'repeatExpiresAt' needs 'repeatEvery'") }
            return nil
        }
        // A second of slack: the client's clock and the request's trip.
        if let publishAt, publishAt < now - 1_000 { throw MessagingError.invalidPublishAt }
        let first = max(publishAt ?? now, now)
        if let every, !(1...31_536_000).contains(every) {
            throw MessagingError.invalidBody("'repeatEvery' is a whole number of seconds from 1 to 31,536,000")
        }
        if let expires, expires <= first { throw MessagingError.invalidRepeatExpiry }
        return Schedule(publishAt: first, repeatEvery: every.map { $0 * 1_000 }, repeatExpiresAt: expires)
    }

    private static func integer(_ value: JSONValue?) throws(ErrorEnvelope) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .integer(let integer)?: return integer
        case .number(let number)? where number.isFinite && number == number.rounded() && abs(number) < 9e15:
            return Int64(number)
        default: throw MessagingError.invalidBody("'publishAt', 'repeatEvery' and 'repeatExpiresAt' are whole numbers")
        }
    }

    private static func text(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> String? {
        try MessagingError.optionalText(value, name, upTo: 1_024)
    }

    private static func headers(_ value: JSONValue?) throws(ErrorEnvelope) -> JSONObject {
        switch value {
        case nil, .null?: return JSONObject()
        case .object(let headers)?:
            guard headers.members.count <= maximumHeaders else {
                throw MessagingError.invalidBody("A message may carry at most \(maximumHeaders) headers")
            }
            for (name, value) in headers.members {
                guard (1...255).contains(name.utf8.count) else {
                    throw MessagingError.invalidBody("Header names are 1 to 255 bytes")
                }
                switch value {
                case .string, .integer, .bool, .null: continue
                case .number(let number) where number.isFinite: continue
                default:
                    throw MessagingError.invalidBody(
                        "Header '\(name.prefix(64))' must be a string, a number or a boolean")
                }
            }
            return headers
        default: throw MessagingError.invalidBody("'headers' must be an object")
        }
    }
}
