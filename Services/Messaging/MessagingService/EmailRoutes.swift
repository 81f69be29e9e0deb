import Foundation
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// `POST /messaging/email`: `{"subject", "bodyparts": {"textmessage", "htmlmessage"}, "to": [..],
/// "cc"?, "bcc"?, "attachment"?: [paths in file storage]}` (`attachments` too, as the JS SDK
/// names it). Sending needs the server-code key: app keys ship inside clients and anyone
/// can become a (guest) user, so anything less would make the relay an open one.
struct EmailRoutes {
    let mailer: Mailer

    func add(to router: inout PublicRoutes) {
        router.add(.post, "messaging/email", doc: .sendEmail) { call in
            try call.requireServerCode(for: "Permission denied: sending email")
            let (request, paths) = try Self.request(call)
            try mailer.check(request)
            let attachments = try await mailer.attachments(paths, context: call.context)
            return try .json(try await mailer.send(request, attachments: attachments, within: call.context))
        }
    }

    /// The contract's body.
    private struct Body: Decodable {
        struct Parts: Decodable {
            var textmessage: String?
            var htmlmessage: String?
        }
        var subject: String?
        var bodyparts: Parts?
        var to: [String]?
        var cc: [String]?
        var bcc: [String]?
        var attachment: [String]?
        var attachments: [String]?
    }

    /// The email and its attachments' paths.
    private static func request(_ call: PublicCall) throws -> (SendEmail.Request, [String]) {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(call.body.readableBytesView))
        } catch {
            throw MailError.invalid(
                "The body must be {subject, bodyparts: {textmessage, htmlmessage}, to: [addresses]}")
        }
        let request = SendEmail.Request(
            to: body.to ?? [], cc: body.cc ?? [], bcc: body.bcc ?? [], subject: body.subject ?? "",
            text: body.bodyparts?.textmessage, html: body.bodyparts?.htmlmessage)
        return (request, (body.attachment ?? []) + (body.attachments ?? []))
    }
}
