import DataEngine
import InternalProtocol

/// A device registered for push on some channels (contract §6, seed §6.4): its provider token,
/// the client's device id, OS and version, and when the registration ends.
struct DeviceRegistration: Sendable, Equatable {
    /// The operating systems push knows (seed S0:8209: the headers' and providers' names).
    enum OS: String, Sendable, CaseIterable {
        case ios = "IOS"
        case android = "ANDROID"
        case windowsPhone = "WP"
        case osx = "OSX"
    }

    var id = ""
    let deviceToken: String
    let deviceId: String
    let os: OS
    let osVersion: String?
    let channels: [String]
    /// Epoch ms; nil for a registration that does not end.
    let expiration: Int64?

    /// The most channels one device may be registered on.
    static let maximumChannels = 100
    /// The longest device token, in bytes (APNs tokens are 64 hex digits today, FCM's about 160).
    static let maximumTokenLength = 4_096
    /// The longest device id, in bytes: ids are a primary key, whose index rows PostgreSQL keeps
    /// under about 2,700 bytes (a longer id answered 500: second probe, F10).
    static let maximumDeviceIdLength = 1_024

    /// `{"id", "deviceToken", "deviceId", "os", "osVersion", "expiration", "channels"}`.
    var json: JSONValue {
        .object(
            JSONObject([
                ("id", .string(id)), ("deviceToken", .string(deviceToken)), ("deviceId", .string(deviceId)),
                ("os", .string(os.rawValue)), ("osVersion", osVersion.map(JSONValue.string) ?? .null),
                ("expiration", expiration.map(JSONValue.integer) ?? .null),
                ("channels", .array(channels.map(JSONValue.string))),
            ]))
    }
}

extension DeviceRegistration {
    /// Reads a registration body: `deviceToken`, `deviceId` and `os` required, `osVersion`,
    /// `channels` (default `["default"]`) and `expiration` optional. The JS SDK sends the
    /// expiration in epoch seconds, Swift in epoch ms: a value below 10^11 (the year 5138 in
    /// seconds, 1973 in ms) is taken as seconds. 5011 for malformed members, 5010 for a channel
    /// name, 5004 for an expiration that is not in the future, 8000 for a value too long.
    init(_ body: JSONValue?, now: Int64) throws(ErrorEnvelope) {
        guard let object = body?.object else {
            throw MessagingError.invalidBody("The body must be a JSON object with 'deviceToken'")
        }
        deviceToken = try Self.required(object["deviceToken"], "deviceToken")
        deviceId = try Self.required(object["deviceId"], "deviceId", upTo: Self.maximumDeviceIdLength)
        let osName = try Self.required(object["os"], "os").uppercased()
        guard let os = OS(rawValue: osName) else {
            throw MessagingError.invalidBody(
                "'os' must be one of \(OS.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.os = os
        osVersion = try MessagingError.optionalText(object["osVersion"], "osVersion", upTo: 255)
        channels = try Self.channels(object["channels"])
        expiration = try Self.expiration(object["expiration"], now: now)
    }

    private static func required(_ value: JSONValue?, _ name: String, upTo limit: Int = maximumTokenLength)
        throws(ErrorEnvelope) -> String
    {
        guard case .string(let text)? = value, !text.isEmpty else {
            throw MessagingError.invalidBody("'\(name)' must be a non-empty string")
        }
        guard text.utf8.count <= limit else { throw MessagingError.valueTooLong(name) }
        return text
    }

    private static func channels(_ value: JSONValue?) throws(ErrorEnvelope) -> [String] {
        switch value {
        case nil, .null?: return ["default"]
        case .array(let items)?:
            guard !items.isEmpty else { return ["default"] }
            guard items.count <= maximumChannels else {
                throw MessagingError.invalidBody("A device may be registered on at most \(maximumChannels) channels")
            }
            var names: [String] = []
            for item in items {
                guard case .string(let name) = item else {
                    throw MessagingError.invalidBody("'channels' must be channel names")
                }
                let channel = try ChannelName.validated(name)
                if !names.contains(channel) { names.append(channel) }
            }
            return names
        default: throw MessagingError.invalidBody("'channels' must be an array of channel names")
        }
    }

    private static func expiration(_ value: JSONValue?, now: Int64) throws(ErrorEnvelope) -> Int64? {
        let instant: Int64
        switch value {
        case nil, .null?: return nil
        case .integer(let integer)?: instant = integer
        case .number(let number)? where number.isFinite && abs(number) < 9e15: instant = Int64(number)
        default: throw MessagingError.invalidBody("'expiration' must be a time (epoch seconds or ms)")
        }
        guard instant > 0 else { throw MessagingError.invalidExpiration }
        let milliseconds = instant < 100_000_000_000 ? instant * 1_000 : instant
        guard milliseconds > now else { throw MessagingError.invalidExpiration }
        return milliseconds
    }
}
