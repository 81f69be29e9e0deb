import DataEngine
import NIOCore

@testable import MessagingService

/// Real-time frames: the bytes are one WebSocket text frame (an Engine.IO packet, a Socket.IO
/// packet inside its message) and one long-polling POST body of either Engine.IO revision,
/// whose packets are read the same way. Packets that decode must encode back to text that
/// decodes to the same packet.
enum EngineIOTarget {
    /// Reads one input as a WebSocket frame and as a polling body of each revision.
    static func run(_ input: [UInt8]) {
        frame(String(decoding: input, as: UTF8.self))
        let body = ByteBuffer(bytes: input)
        for version in [EngineIOVersion.v3, .v4] {
            guard let packets = PollingPayload.decode(body, version: version) else { continue }
            for packet in packets { frame(packet) }
            checkPayloadRoundTrip(packets, version: version)
        }
    }

    /// One WebSocket text frame as ``RTConnection`` reads it.
    private static func frame(_ text: String) {
        guard let packet = EnginePacket(text) else { return }
        guard EnginePacket(packet.encoded) == packet else {
            preconditionFailure(
                "'\(packet.encoded)', written from \(packet), decodes to \(String(describing: EnginePacket(packet.encoded)))"
            )
        }
        guard case .message(let data) = packet, let message = SocketIOPacket(data) else { return }
        // Data written right after the type digit reads as an acknowledgement id if it is a number.
        if let data = message.data, data.jsonText.first.map({ $0.isNumber || $0 == "-" }) ?? false { return }
        guard SocketIOPacket(message.encoded) == message else {
            preconditionFailure(
                "'\(message.encoded)', written from \(message), decodes to \(String(describing: SocketIOPacket(message.encoded)))"
            )
        }
    }

    /// Packets a body decoded to must survive encoding into a body and decoding again.
    private static func checkPayloadRoundTrip(_ packets: [String], version: EngineIOVersion) {
        let encoded = PollingPayload.encode(packets, version: version)
        let decoded = PollingPayload.decode(ByteBuffer(string: encoded), version: version)
        guard decoded == packets else {
            preconditionFailure(
                "\(packets) encode for EIO \(version.rawValue) to '\(encoded)', which decodes to \(String(describing: decoded))"
            )
        }
    }
}
