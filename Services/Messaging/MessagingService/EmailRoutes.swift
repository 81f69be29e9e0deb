import Foundation
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// `POST /messaging/email`: `{"subject", "bodyparts": {"textmessage", "htmlmessage"}, "to": [..],
/// "cc"?, "bcc"?, "attachment"?: [paths in file storage]}` (`attachments` too, as the JS SDK
/// names it). The server-code key always sends; a client key as the app's PUBLISH cells on the
/// `email` container decide (``ChannelAccess/requireEmail(_:what:)``) — granted where no cell says
/// otherwise, as Backendless does. App keys ship inside clients and anyone can become a (guest)
/// user: an app that does not want its relay used from clients denies PUBLISH on `email`.
struct EmailRoutes {
    let mailer: Mailer
    let access: ChannelAccess

    func add(to router: inout PublicRoutes) {
        router.add(.post, "messaging/email", doc: .sendEmail) { call in
            try await access.requireEmail(call.identity, what: "sending email")
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
