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

    /// The most headers one message may carry.
    static let maximumHeaders = 256

    /// Reads `body`; 5011 for malformed members, 5012 for a subtopic, 5015 for push and
    /// scheduling until they exist.
    init(_ body: JSONValue?) throws(ErrorEnvelope) {
        guard let object = body?.object else { throw MessagingError.invalidBody("The body must be a JSON object with 'message'") }
        message = object["message"] ?? .null
        publisherId = try Self.text(object["publisherId"], "publisherId")
        headers = try Self.headers(object["headers"])
        if let text = try Self.text(object["subtopic"], "subtopic") {
            guard Subtopic(text, wildcards: false) != nil else { throw MessagingError.invalidSubtopic(text) }
            subtopic = text
        } else {
            subtopic = nil
        }
        let policy = try Self.text(object["publishPolicy"] ?? object["pushPolicy"], "publishPolicy")?.uppercased()
        guard policy == nil || policy == "PUBSUB" else { throw MessagingError.notSupportedYet("Push delivery ('\(policy ?? "")')") }
        for key in ["publishAt", "repeatEvery", "repeatExpiresAt"] where object[key] != nil && object[key] != .null {
            throw MessagingError.notSupportedYet("Scheduled publishing ('\(key)')")
        }
    }

    private static func text(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.utf8.count <= 1_024: return text
        default: throw MessagingError.invalidBody("'\(name)' must be a string of at most 1,024 bytes")
        }
    }

    private static func headers(_ value: JSONValue?) throws(ErrorEnvelope) -> JSONObject {
        switch value {
        case nil, .null?: return JSONObject()
        case .object(let headers)?:
            guard headers.members.count <= maximumHeaders else {
                throw MessagingError.invalidBody("A message may carry at most \(maximumHeaders) headers")
            }
            for (name, value) in headers.members {
                guard (1...255).contains(name.utf8.count) else { throw MessagingError.invalidBody("Header names are 1 to 255 bytes") }
                switch value {
                case .string, .integer, .bool, .null: continue
                case .number(let number) where number.isFinite: continue
                default: throw MessagingError.invalidBody("Header '\(name.prefix(64))' must be a string, a number or a boolean")
                }
            }
            return headers
        default: throw MessagingError.invalidBody("'headers' must be an object")
        }
    }
}
