import HTTPTypes
import NIOCore

/// A frame of a lane, an internal stream carrying many exchanges at once (sockets, calls). On
/// the stream a frame is a one-byte kind, the exchange's four-byte number, a four-byte length
/// and the payload.
protocol LaneFrameCoding: Sendable {
    /// The frame as it travels, appended to `buffer`.
    func encode(into buffer: inout ByteBuffer)
    /// The frame of `kind` for exchange `number` carrying `payload`; nil for bytes that are no frame.
    static func decode(kind: UInt8, number: UInt32, payload: ByteBuffer) -> Self?
}

extension LaneFrameCoding {
    /// Appends a frame whose payload `writePayload` writes straight into `buffer` (no copy
    /// through a buffer of its own); the length is filled in after it.
    static func write(
        _ kind: UInt8, _ number: UInt32, into buffer: inout ByteBuffer,
        payload writePayload: (inout ByteBuffer) -> Void = { _ in }
    ) {
        buffer.writeInteger(kind)
        buffer.writeInteger(number)
        let lengthAt = buffer.writerIndex
        buffer.writeInteger(UInt32(0))
        writePayload(&buffer)
        buffer.setInteger(UInt32(buffer.writerIndex - lengthAt - 4), at: lengthAt)
    }
}

/// Writes and reads the strings of lane payloads: a four-byte length, then UTF-8.
enum LaneText {
    static func write(_ text: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(text.utf8.count))
        buffer.writeString(text)
    }

    static func read(_ buffer: inout ByteBuffer) -> String? {
        guard let length = buffer.readInteger(as: UInt32.self) else { return nil }
        return buffer.readString(length: Int(length))
    }

    /// Writes a header list: a two-byte count, then each name and value.
    static func write<Pairs: Collection>(_ headers: Pairs, into buffer: inout ByteBuffer)
    where Pairs.Element == (name: String, value: String) {
        buffer.writeInteger(UInt16(clamping: headers.count))
        for header in headers.prefix(Int(UInt16.max)) {
            write(header.name, into: &buffer)
            write(header.value, into: &buffer)
        }
    }

    /// Writes header fields as a header list.
    static func write(_ fields: HTTPFields, into buffer: inout ByteBuffer) {
        write(fields.lazy.map { (name: $0.name.rawName, value: $0.value) }, into: &buffer)
    }

    /// Reads a header list as header fields; nil when it is cut short or names an invalid field.
    static func readFields(_ buffer: inout ByteBuffer) -> HTTPFields? {
        guard let count = buffer.readInteger(as: UInt16.self) else { return nil }
        var fields = HTTPFields()
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let name = read(&buffer).flatMap({ HTTPField.Name($0) }), let value = read(&buffer) else {
                return nil
            }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }

    /// Reads a header list written as pairs.
    static func readHeaders(_ buffer: inout ByteBuffer) -> [(name: String, value: String)]? {
        guard let count = buffer.readInteger(as: UInt16.self) else { return nil }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let name = read(&buffer), let value = read(&buffer) else { return nil }
            headers.append((name, value))
        }
        return headers
    }
}

/// Cuts lane frames out of a lane's bytes as they arrive, refusing a frame longer than
/// `maximumPayload` before buffering it.
struct LaneFrameDecoder<Frame: LaneFrameCoding>: Sendable {
    private var pending = ByteBuffer()
    let maximumPayload: Int

    init(maximumPayload: Int) {
        self.maximumPayload = maximumPayload
    }

    mutating func append(_ bytes: ByteBuffer) {
        if pending.readableBytes == 0 {
            pending = bytes
        } else {
            var bytes = bytes
            pending.writeBuffer(&bytes)
        }
    }

    /// The next whole frame, if the bytes so far hold one.
    mutating func next() throws -> Frame? {
        let start = pending.readerIndex
        guard let kind = pending.getInteger(at: start, as: UInt8.self),
            let number = pending.getInteger(at: start + 1, as: UInt32.self),
            let length = pending.getInteger(at: start + 5, as: UInt32.self)
        else { return nil }
        guard Int(length) <= maximumPayload else { throw SocketStreamError.frameTooLarge }
        guard pending.readableBytes >= 9 + Int(length) else { return nil }
        pending.moveReaderIndex(forwardBy: 9)
        // A copy, so a frame does not keep the lane's larger buffer alive.
        var payload = ByteBuffer()
        payload.writeImmutableBuffer(pending.readSlice(length: Int(length))!)
        if pending.readableBytes == 0 {
            pending = ByteBuffer()
        } else if pending.readerIndex > 1 << 16 {
            pending.discardReadBytes()
        }
        guard let frame = Frame.decode(kind: kind, number: number, payload: payload) else {
            throw SocketStreamError.malformed
        }
        return frame
    }
}
