import AsyncHTTPClient
import InternalProtocol
import NIOCore
import ServiceRuntime

/// A file from the app's storage attached to an email, described before the first email is
/// sent and read from files-service while the email is written to the relay.
struct MailAttachment: Sendable, Equatable {
    /// The file's path from the root of the app's tree.
    var path: String
    /// The file name the recipient sees.
    var name: String
    /// Bytes when described.
    var size: Int64
    /// Its media type.
    var contentType: String
}

/// Attachments by storage path (contract §6: relative to the root, a leading slash allowed),
/// described and read through files-service with the sender's identity, so the sender must be
/// allowed to read each file.
struct AttachmentFiles: Sendable {
    let peers: InternalClient
    /// The most bytes all attachments of one email may hold together.
    let limit: Int64

    /// The most files one email may carry.
    static let countLimit = 10

    /// The files `paths` name, checked before anything is sent: at most ``countLimit`` of them,
    /// together at most ``limit`` bytes (5101), each readable by the sender (files-service's
    /// 4000 / 6000 / 6006).
    func describe(_ paths: [String], context: CallContext) async throws -> [MailAttachment] {
        guard paths.count <= Self.countLimit else {
            throw MailError.invalid("An email may carry at most \(Self.countLimit) attachments")
        }
        var attachments: [MailAttachment] = []
        for path in paths {
            let file = try await peers.call(
                FileInfo.self, .init(path: path, maximumBytes: limit), on: .files, context: context)
            attachments.append(
                MailAttachment(path: file.path, name: file.name, size: file.size, contentType: file.contentType))
        }
        let total = attachments.reduce(0) { $0 + $1.size }
        guard total <= limit else { throw MailError.invalid("The attachments hold \(total) bytes, more than \(limit)") }
        return attachments
    }

    /// Hands `attachment`'s bytes to `consume` as files-service reads them; a file that has
    /// grown past the limit since it was described is refused.
    func read(_ attachment: MailAttachment, context: CallContext, into consume: (ByteBuffer) async throws -> Void)
        async throws
    {
        try await peers.streamingCall(
            FileContent.name, FileInfo.Request(path: attachment.path, maximumBytes: limit), on: .files, context: context
        ) { body in
            for try await chunk in body { try await consume(chunk) }
        }
    }
}
