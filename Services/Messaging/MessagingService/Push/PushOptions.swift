import DataEngine
import Foundation
import InternalProtocol

/// Where a publish goes (contract §6; push-delivery §3.1): `publishPolicy` (or the older
/// `pushPolicy`) as `PUSH` / `PUBSUB` / `BOTH` or the Swift and Flutter SDKs' 0 / 1 / 2; absent,
/// a publish goes to both. Push targets every live registration on the channel, narrowed by
/// `pushBroadcast` (operating systems: the mask IOS 1, ANDROID 2, WP 4, OSX 8, or names such as
/// `"FOR_IOS|FOR_ANDROID"`, `"FOR_ALL"`), `pushSinglecast` (device ids) and `segmentQuery` (a
/// condition over `deviceId`, `os` and `osVersion`).
struct PushOptions: Sendable, Equatable {
    /// Whether subscribers get the message.
    var pubSub = true
    /// Which devices get it; nil when none do.
    var targets: Targets?

    /// The devices a push goes to.
    struct Targets: Sendable, Equatable {
        var systems: Set<DeviceRegistration.OS> = Set(DeviceRegistration.OS.allCases)
        var devices: [String]?
        var segment: String?

        /// The stored form.
        var json: JSONValue {
            var object = JSONObject([("os", .array(systems.map(\.rawValue).sorted().map(JSONValue.string)))])
            if let devices { object["devices"] = .array(devices.map(JSONValue.string)) }
            if let segment { object["segment"] = .string(segment) }
            return .object(object)
        }

        /// From the stored form.
        init(json: JSONValue) {
            let object = json.object ?? JSONObject()
            systems = Set(
                (object["os"]?.array ?? []).compactMap { $0.string.flatMap(DeviceRegistration.OS.init(rawValue:)) })
            devices = object["devices"]?.array?.compactMap(\.string)
            segment = object["segment"]?.string
        }

        init() {}
    }

    /// The most device ids one singlecast names.
    static let maximumDevices = 1_000

    /// Reads the delivery options of a publish body; 5011 for malformed ones, 5013 for a segment
    /// query that is not a condition over registrations.
    init(_ object: JSONObject) throws(ErrorEnvelope) {
        let policy = try Self.policy(object["publishPolicy"] ?? object["pushPolicy"])
        pubSub = policy != "PUSH"
        guard policy != "PUBSUB" else { return }
        var targets = Targets()
        if let systems = try Self.systems(object["pushBroadcast"]) { targets.systems = systems }
        targets.devices = try Self.devices(object["pushSinglecast"])
        switch object["segmentQuery"] {
        case nil, .null?: break
        case .string(let text)? where text.allSatisfy(\.isWhitespace): break
        case .string(let text)?:
            _ = try Selector(text)
            targets.segment = text
        default: throw MessagingError.invalidBody("'segmentQuery' must be a condition over registrations")
        }
        self.targets = targets
    }

    private static func policy(_ value: JSONValue?) throws(ErrorEnvelope) -> String {
        switch value {
        case nil, .null?: return "BOTH"
        case .string(let name)? where ["PUSH", "PUBSUB", "BOTH"].contains(name.uppercased()): return name.uppercased()
        case .integer(let index)? where (0...2).contains(index): return ["PUSH", "PUBSUB", "BOTH"][Int(index)]
        default: throw MessagingError.invalidBody("'publishPolicy' must be PUSH, PUBSUB or BOTH (or 0, 1, 2)")
        }
    }

    private static func systems(_ value: JSONValue?) throws(ErrorEnvelope) -> Set<DeviceRegistration.OS>? {
        let masks: [(Int64, DeviceRegistration.OS)] = [(1, .ios), (2, .android), (4, .windowsPhone), (8, .osx)]
        switch value {
        case nil, .null?: return nil
        case .integer(let mask)? where (1...15).contains(mask):
            return Set(masks.filter { mask & $0.0 != 0 }.map(\.1))
        case .string(let text)?:
            var systems = Set<DeviceRegistration.OS>()
            for part in text.uppercased().split(separator: "|").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                let name = part.hasPrefix("FOR_") ? String(part.dropFirst(4)) : part
                if name == "ALL" {
                    systems.formUnion(DeviceRegistration.OS.allCases)
                } else if let system = DeviceRegistration.OS(rawValue: name == "WINDOWS_PHONE" ? "WP" : name) {
                    systems.insert(system)
                } else {
                    throw MessagingError.invalidBody("'pushBroadcast' names an unknown system '\(part.prefix(32))'")
                }
            }
            guard !systems.isEmpty else { throw MessagingError.invalidBody("'pushBroadcast' names no system") }
            return systems
        default:
            throw MessagingError.invalidBody(
                "'pushBroadcast' must be a mask from 1 to 15 or names such as \"FOR_IOS|FOR_ANDROID\"")
        }
    }

    private static func devices(_ value: JSONValue?) throws(ErrorEnvelope) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .array(let items)? where items.count <= maximumDevices:
            var devices: [String] = []
            for item in items {
                guard case .string(let id) = item, !id.isEmpty, id.utf8.count <= DeviceRegistration.maximumTokenLength
                else {
                    throw MessagingError.invalidBody("'pushSinglecast' must be device ids")
                }
                devices.append(id)
            }
            return devices
        default: throw MessagingError.invalidBody("'pushSinglecast' must be at most \(maximumDevices) device ids")
        }
    }
}
