import DataEngine
import Foundation

/// What a Backendless publish becomes for each provider (push-delivery §3.2). Headers travel as
/// strings (numbers and booleans as their JSON); `wp-*` headers are Windows Phone's and dropped.
enum PushPayloads {
    /// How long the providers keep trying a push: a day (Backendless sets no per-message TTL).
    static let lifetime: Int64 = 86_400

    /// The message as a push carries it: a string as is, anything else as its JSON.
    static func text(_ message: JSONValue) -> String {
        if case .string(let text) = message { return text }
        return message.jsonText
    }

    /// The headers as (name, string) pairs, in order, without `wp-*` and without `skipping`.
    static func strings(_ headers: JSONObject, skipping: Set<String> = []) -> [(String, String)] {
        headers.members.compactMap { name, value in
            guard !name.lowercased().hasPrefix("wp-"), !skipping.contains(name) else { return nil }
            switch value {
            case .string(let text): return (name, text)
            case .null: return nil
            default: return (name, value.jsonText)
            }
        }
    }

    /// A header FCM would refuse as a data key (`from`, `message_type`, `gcm…`, `google…`), if any.
    static func reservedForFCM(_ headers: JSONObject) -> String? {
        headers.members.map(\.0).first { name in
            let lower = name.lowercased()
            return lower == "from" || lower == "message_type" || lower.hasPrefix("gcm") || lower.hasPrefix("google")
        }
    }

    /// The APNs notification: `aps` from the `ios-*` headers (the alert body from `ios-alert-body`
    /// or `ios-alert`, else the message; a JSON null there means no alert), a silent push for a
    /// truthy `ios-content-available`, and the message, its id and every header as custom keys.
    static func apns(message: JSONValue, headers: JSONObject, messageId: String, deviceToken: String, now: Int64)
        -> APNsNotification
    {
        let silent = truthy(headers["ios-content-available"])
        var aps = JSONObject()
        if silent {
            aps["content-available"] = .integer(1)
        } else {
            if let alert = alert(message: message, headers: headers) { aps["alert"] = .object(alert) }
            if let badge = headers["ios-badge"].flatMap(integer) { aps["badge"] = .integer(badge) }
            if case .string(let sound)? = headers["ios-sound"] { aps["sound"] = .string(sound) }
            aps["mutable-content"] = .integer(1)
        }
        var payload = JSONObject([
            ("aps", .object(aps)), ("message", .string(text(message))), ("messageId", .string(messageId)),
        ])
        for (name, value) in strings(headers, skipping: ["aps", "message", "messageId"]) {
            payload[name] = .string(value)
        }
        return APNsNotification(
            deviceToken: deviceToken, payload: payload, background: silent, expiration: now / 1000 + lifetime,
            id: UUID().uuidString.lowercased())
    }

    /// The FCM message: data only, the message, its id and every header.
    static func fcm(message: JSONValue, headers: JSONObject, messageId: String, deviceToken: String) -> FCMMessage {
        let data =
            [("message", text(message)), ("messageId", messageId)]
            + strings(headers, skipping: ["message", "messageId"])
        return FCMMessage(token: deviceToken, data: data, timeToLive: lifetime)
    }

    private static func alert(message: JSONValue, headers: JSONObject) -> JSONObject? {
        var alert = JSONObject()
        switch headers["ios-alert-body"] ?? headers["ios-alert"] {
        case .null?: return nil
        case .string(let body)?: alert["body"] = .string(body)
        case let other?: alert["body"] = .string(other.jsonText)
        case nil: alert["body"] = .string(text(message))
        }
        for (header, key) in [("ios-alert-title", "title"), ("ios-alert-subtitle", "subtitle")] {
            if case .string(let value)? = headers[header] { alert[key] = .string(value) }
        }
        return alert
    }

    private static func truthy(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let truth)?: truth
        case .integer(let number)?: number != 0
        case .string(let text)?: ["1", "true", "yes"].contains(text.lowercased())
        default: false
        }
    }

    private static func integer(_ value: JSONValue) -> Int64? {
        switch value {
        case .integer(let number): number
        case .string(let text): Int64(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }
}
