import AsyncHTTPClient
import Crypto
import Foundation
import InternalProtocol
import NIOCore
import ServiceRuntime
import TestSupport
import Testing

@testable import MessagingService

/// Email attachments from file storage (issue 16 item 7): files named by storage path arrive
/// byte for byte with their names and types, in plain emails and template sends, streamed from
/// files-service with the sender's rights; missing, too many or too large files are refused
/// before any email is sent.
@Suite(.timeLimit(.minutes(20))) struct EmailAttachmentTests {
    /// Bytes that fill no whole base64 line at the end (300,001 = 57 × 5263 + 10).
    static let report = (0..<300_001).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) }
    static let note = Array("Grüße, Ann.\n.a line with a dot\n".utf8)

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// A cluster with a mail sink, a private file root and attachments bounded at 400,000 bytes.
    static func withCluster(_ body: @Sendable @escaping (TestCluster, SMTPSink) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("attach-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
                "BAAS_FILES_ROOT": root, "BAAS_SMTP_MAX_ATTACHMENT_BYTES": "400000",
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                for (path, bytes) in [
                    ("docs/report.pdf", report), ("docs/Gr%C3%BC%C3%9Fe%20%C3%BC.txt", note), ("docs/copy.pdf", report),
                ] {
                    let stored = try await HTTPTestClient.send(
                        .PUT, cluster.gatewayURL + cluster.prefix() + "/files/binary/" + path,
                        headers: [("Content-Type", "text/plain")],
                        body: Data(Data(bytes).base64EncodedString().utf8))
                    #expect(stored.status == 200, "\(stored.text)")
                }
                try await body(cluster, sink)
            }
        }
    }

    static func email(_ attachments: String) -> String {
        #"{"subject": "Files", "bodyparts": {"textmessage": "See attached"}, "to": ["ann@example.com"], "attachment": \#(attachments)}"#
    }

    @Test func attachmentsArriveByteForByteInEmailsAndTemplateSends() async throws {
        try await Self.withCluster { cluster, sink in
            let sent = try await cluster.send(
                .POST, "/messaging/email", Self.email(#"["docs/report.pdf", "/docs/Grüße ü.txt"]"#), key: .serverCode)
            #expect(sent.status == 200 && sent.json["status"] as? String == "PUBLISHED", "\(sent.text)")
            let mail = try #require(try sink.messages().first)
            #expect((mail["text"] as? String)?.hasPrefix("See attached") == true, "\(mail)")
            let files = try #require(mail["attachments"] as? [[String: Any]])
            #expect(files.count == 2)
            #expect(
                files.first?["filename"] as? String == "report.pdf"
                    && files.first?["contentType"] as? String == "application/pdf")
            #expect(
                files.first?["size"] as? Int == Self.report.count
                    && files.first?["sha256"] as? String == Self.sha256(Self.report))
            #expect(
                files.last?["filename"] as? String == "Grüße ü.txt"
                    && files.last?["contentType"] as? String == "text/plain")
            #expect(files.last?["sha256"] as? String == Self.sha256(Self.note))

            // A template send attaches the same file to every email it writes.
            for email in ["bob@example.com", "cy@example.com"] {
                #expect(
                    try await cluster.send(.POST, "/users/register", #"{"email": "\#(email)", "password": "pw"}"#)
                        .status == 200)
            }
            let template = #"{"subject": "Hi", "bodyparts": {"htmlmessage": "<p>Hi</p>"}}"#
            #expect(try await cluster.send(.PUT, "/emailtemplate/files", template, key: .serverCode).status == 200)
            let send =
                #"{"template-name": "files", "addresses": ["x@example.com"], "criteria": "email LIKE '%example.com'", "attachments": ["docs/report.pdf"]}"#
            let templated = try await cluster.send(.POST, "/emailtemplate/send", send, key: .serverCode)
            #expect(templated.json["sent"] as? Int == 3, "\(templated.text)")
            let mails = try sink.messages()
            #expect(mails.count == 4)
            for mail in mails.dropFirst() {
                let files = mail["attachments"] as? [[String: Any]]
                #expect(files?.count == 1 && files?.first?["sha256"] as? String == Self.sha256(Self.report), "\(mail)")
                #expect((mail["html"] as? String)?.contains("<p>Hi</p>") == true)
            }
        }
    }

    @Test func missingTooManyOrTooLargeAttachmentsAreRefusedBeforeAnyEmail() async throws {
        try await Self.withCluster { cluster, sink in
            let cases: [(String, Int, Int)] = [
                (#"["docs/none.pdf"]"#, 404, 6000), (#"["docs"]"#, 404, 6000), (#"["../etc/passwd"]"#, 400, 6006),
                (#"["docs/report.pdf", "docs/copy.pdf"]"#, 400, 5101),
                (String(repeating: #""docs/copy.pdf", "#, count: 10) + #""docs/report.pdf""#, 400, 5101),
                (#"[42]"#, 400, 5101),
            ]
            for (paths, status, code) in cases {
                let body = Self.email(paths.hasPrefix("[") ? paths : "[" + paths + "]")
                let refused = try await cluster.send(.POST, "/messaging/email", body, key: .serverCode)
                #expect(refused.status == status && refused.json["code"] as? Int == code, "\(paths): \(refused.text)")
                let template =
                    #"{"template-name": "t", "addresses": ["x@example.com"], "attachment": \#(paths.hasPrefix("[") ? paths : "[" + paths + "]")}"#
                #expect(
                    try await cluster.send(
                        .PUT, "/emailtemplate/t", #"{"subject": "s", "bodyparts": {"textmessage": "t"}}"#,
                        key: .serverCode
                    ).status == 200)
                let viaTemplate = try await cluster.send(.POST, "/emailtemplate/send", template, key: .serverCode)
                #expect(
                    viaTemplate.status == status && viaTemplate.json["code"] as? Int == code,
                    "\(paths): \(viaTemplate.text)")
            }
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func filesServiceDescribesAndStreamsOnlyWhatTheIdentityMayRead() async throws {
        try await Self.withCluster { cluster, _ in
            let denied = #"{"permission": "READ", "role": "RestUser"}"#
            #expect(
                try await cluster.send(.PUT, "/files/permissions/DENY/docs/copy.pdf", denied, key: .serverCode).status
                    == 200)
            let url = "https://127.0.0.1:\(await cluster.ports[.files]!.port(.rpc))"
            let messaging = try InternalClient(
                tls: TestPKI.material(for: .messaging), peers: [.files: url], connectTimeout: TestPKI.connectTimeout)
            let gateway = try InternalClient(
                tls: TestPKI.material(for: .gateway), peers: [.files: url], connectTimeout: TestPKI.connectTimeout)
            func context(_ kind: APIKeyKind) -> CallContext {
                CallContext(
                    deadline: .now() + .seconds(60),
                    identity: Identity(
                        appId: cluster.app.id, keyKind: kind, roles: [kind.role, SystemRoles.notAuthenticated]),
                    logger: TestDatabase.logger)
            }
            try await messaging.using { messaging in
                let info = try await messaging.call(
                    FileInfo.self, .init(path: "/docs/report.pdf"), on: .files, context: context(.rest))
                #expect(
                    info
                        == FileInfo.Response(
                            path: "docs/report.pdf", name: "report.pdf", size: Int64(Self.report.count),
                            contentType: "application/pdf"))
                let bytes = try await messaging.streamingCall(
                    FileContent.name, FileInfo.Request(path: "docs/report.pdf"), on: .files, context: context(.rest)
                ) { body in
                    var bytes: [UInt8] = []
                    for try await chunk in body { bytes += chunk.readableBytesView }
                    return bytes
                }
                #expect(bytes == Self.report)
                await expectEnvelope(4000) {
                    _ = try await messaging.call(
                        FileInfo.self, .init(path: "docs/copy.pdf"), on: .files, context: context(.rest))
                }
                await expectEnvelope(4000) {
                    try await messaging.streamingCall(
                        FileContent.name, FileInfo.Request(path: "docs/copy.pdf"), on: .files, context: context(.rest)
                    ) { _ in }
                }
                #expect(
                    try await messaging.call(
                        FileInfo.self, .init(path: "docs/copy.pdf"), on: .files, context: context(.serverCode)
                    ).size == 300_001)
                await expectEnvelope(6016) {
                    try await messaging.streamingCall(
                        FileContent.name, FileInfo.Request(path: "docs/report.pdf", maximumBytes: 300_000), on: .files,
                        context: context(.rest)
                    ) { _ in }
                }
            }
            try await gateway.using { gateway in
                await expectEnvelope(ErrorEnvelope.callerRefused.code) {
                    _ = try await gateway.call(
                        FileInfo.self, .init(path: "docs/report.pdf"), on: .files, context: context(.serverCode))
                }
            }
        }
    }

    @Test func base64LinesMatchFoundationWhateverTheChunks() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0..<2_000, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            var encoder = Base64Lines()
            var output = ""
            var rest = bytes[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(Int.random(in: 1...300, using: &generator))
                rest = rest.dropFirst(chunk.count)
                output += String(buffer: encoder.encode(ByteBuffer(bytes: chunk)))
            }
            output += String(buffer: encoder.finish())
            let expected = Data(bytes).base64EncodedString(options: [
                .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
            ])
            #expect(output == (bytes.isEmpty ? "" : expected + "\r\n"))
            #expect(output.split(separator: "\r\n").allSatisfy { $0.count <= 76 && !$0.hasPrefix(".") })
        }
    }

    @Test func attachmentHeadersCarryNothingButTheNameAndAType() {
        let headers = MailMessage.headers(
            of: MailAttachment(
                path: "a", name: "Bericht \"ü\"\r\nBcc: x@y.z.pdf", size: 1, contentType: "text/html\r\nBcc: x@y.z"))
        #expect(headers.first == "Content-Type: application/octet-stream; name=\"Bericht _____Bcc: x@y.z.pdf\"")
        #expect(headers.allSatisfy { !$0.contains("\r") && !$0.contains("\n") && $0.utf8.count < 998 })
        #expect(MailMessage.mediaType("image/svg+xml") == "image/svg+xml")
        #expect(MailMessage.mediaType("text/plain;charset=utf-8") == "text/plain; charset=utf-8")
        #expect(MailMessage.mediaType("text/plain; charset=\"x\r\nBcc: a@b.c\"") == "application/octet-stream")
        #expect(MailMessage.mediaType("text/plain; charset") == "application/octet-stream")
        #expect(MailMessage.mediaType("text") == "application/octet-stream")
    }

    func expectEnvelope(_ code: Int, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected error \(code)")
        } catch let error as ErrorEnvelope {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
