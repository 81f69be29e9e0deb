import DataEngine

/// The Engine.IO revision a client speaks (its `EIO` query parameter): 3 for the Swift SDK, JS
/// SDKs up to 7.4 and python-socketio 4; 4 for JS SDK 8 and python-socketio 5. They differ in
/// who pings and in how a namespace connect is answered.
enum EngineIOVersion: Int, Sendable {
    case v3 = 3
    case v4 = 4
}

/// One Engine.IO packet as it travels in one WebSocket text frame: a type digit and data.
enum EnginePacket: Equatable, Sendable {
    case open(String)
    case close
    case ping(String)
    case pong(String)
    case message(String)
    case upgrade
    case noop

    /// The packet in `text`; nil for an unknown type or an empty frame.
    init?(_ text: String) {
        guard let type = text.first else { return nil }
        let data = String(text.dropFirst())
        switch type {
        case "0": self = .open(data)
        case "1": self = .close
        case "2": self = .ping(data)
        case "3": self = .pong(data)
        case "4": self = .message(data)
        case "5": self = .upgrade
        case "6": self = .noop
        default: return nil
        }
    }

    /// The frame's text.
    var encoded: String {
        switch self {
        case .open(let data): "0" + data
        case .close: "1"
        case .ping(let data): "2" + data
        case .pong(let data): "3" + data
        case .message(let data): "4" + data
        case .upgrade: "5"
        case .noop: "6"
        }
    }
}

/// One Socket.IO packet inside an Engine.IO message: `<type>[/nsp[?query],][ackId][json]`.
struct SocketIOPacket: Equatable, Sendable {
    enum Kind: Character, Sendable {
        case connect = "0"
        case disconnect = "1"
        case event = "2"
        case ack = "3"
        case error = "4"
        case binaryEvent = "5"
        case binaryAck = "6"
    }

    var kind: Kind
    /// The namespace, `/` when none is named; any `?query` dropped.
    var namespace: String
    /// The acknowledgement id the sender asked for, if any.
    var ackID: Int?
    /// The JSON after the header, if any.
    var data: JSONValue?

    init(kind: Kind, namespace: String, ackID: Int? = nil, data: JSONValue? = nil) {
        self.kind = kind
        self.namespace = namespace
        self.ackID = ackID
        self.data = data
    }

    /// The packet in an Engine.IO message's data; nil when it is not one (unknown type, JSON
    /// that does not parse or nests deeper than `maximumDepth`).
    init?(_ text: String, maximumDepth: Int = 16) {
        guard let first = text.first, let kind = Kind(rawValue: first) else { return nil }
        var rest = text.dropFirst()
        var namespace = "/"
        if rest.first == "/" {
            let end = rest.firstIndex(of: ",") ?? rest.endIndex
            namespace = String(rest[..<end].prefix { $0 != "?" })
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        if !digits.isEmpty {
            guard digits.count <= 9 else { return nil }
            ackID = Int(digits)
            rest = rest.dropFirst(digits.count)
        }
        if !rest.isEmpty {
            guard let value = try? JSONParser.parse(Array(rest.utf8), maximumDepth: maximumDepth) else { return nil }
            data = value
        }
        self.kind = kind
        self.namespace = namespace
    }

    /// The Engine.IO message data: the namespace is written with its comma unless it is `/`.
    var encoded: String {
        var text = String(kind.rawValue)
        if namespace != "/" { text += namespace + "," }
        if let ackID { text += String(ackID) }
        if let data { text += data.jsonText }
        return text
    }

    /// An event: `["name", payload]`.
    static func event(_ name: String, _ payload: JSONValue, namespace: String) -> SocketIOPacket {
        SocketIOPacket(kind: .event, namespace: namespace, data: .array([.string(name), payload]))
    }
}
