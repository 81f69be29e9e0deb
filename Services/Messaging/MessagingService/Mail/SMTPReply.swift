import NIOCore

/// One SMTP reply: its three-digit code and the text of each line (RFC 5321 §4.2).
struct SMTPReply: Sendable, Equatable {
    let code: Int
    let lines: [String]

    /// 2xx.
    var isPositive: Bool { (200..<300).contains(code) }
    /// 3xx, the server waits for more (DATA's 354, AUTH's 334).
    var isIntermediate: Bool { (300..<400).contains(code) }
}

/// Splits the server's bytes into replies: lines end in CRLF, `250-…` continues a reply and
/// `250 …` ends it. A malformed line, a reply beyond the size limit, or bytes after a complete
/// reply close the connection: the client never pipelines, so a relay may only answer what was
/// asked — which also keeps replies injected before a STARTTLS upgrade (CVE-2011-0411) out.
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    /// RFC 5321 allows 512 octets per reply line; a generous bound on a whole reply.
    static let replyLimit = 64 * 1024

    private var pending: [String] = []
    private var pendingCode: Int?
    private var pendingBytes = 0

    /// A reply the server sent that breaks the protocol.
    struct ProtocolError: Error {
        let line: String
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.replyLimit { throw ProtocolError(line: "reply too long") }
            return .needMoreData
        }
        let length = end - buffer.readerIndex + 1
        var line = buffer.readString(length: length) ?? ""
        while line.last?.isNewline == true { line.removeLast() }
        let bytes = Array(line.utf8)
        guard bytes.count >= 3, let code = Int(String(line.prefix(3))), pendingCode == nil || pendingCode == code,
            bytes.count == 3 || bytes[3] == UInt8(ascii: " ") || bytes[3] == UInt8(ascii: "-")
        else { throw ProtocolError(line: line) }
        pending.append(bytes.count > 4 ? String(line.dropFirst(4)) : "")
        pendingBytes += length
        guard pendingBytes <= Self.replyLimit else { throw ProtocolError(line: "reply too long") }
        if bytes.count > 3, bytes[3] == UInt8(ascii: "-") {
            pendingCode = code
            return .continue
        }
        guard buffer.readableBytes == 0 else { throw ProtocolError(line: "data after a complete reply") }
        context.fireChannelRead(wrapInboundOut(SMTPReply(code: code, lines: pending)))
        pending = []
        pendingCode = nil
        pendingBytes = 0
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        try decode(context: context, buffer: &buffer)
    }
}
