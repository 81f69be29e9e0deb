import Foundation
import InternalProtocol
import NIOHTTP1
import ServiceRuntime
import TestSupport
import Testing

@testable import MessagingService

/// Email templates (issue 16 item 7): managed with the server-code key, sent to listed
/// addresses and to the users a where clause finds, placeholders filled (HTML-escaped in the
/// HTML part), duplicates dropped with `uniqueEmails`, and bad input refused before any email.
@Suite(.timeLimit(.minutes(20))) struct EmailTemplateTests {
    static let template = #"""
        {"subject": "Hi {name}", "bodyparts": {"textmessage": "Hello {Users.name}, code {code} {unknown}", "htmlmessage": "<p>{Users.name}</p><style>p { color: red }</style>"}}
        """#

    @Test func templatesAreFilledForListedAddressesAndFoundUsers() async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                for (email, name) in [
                    ("ann@example.com", "Ann <b>"), ("bob@example.com", "Bob"), ("carl@example.com", "Carl"),
                ] {
                    let registered = try await cluster.send(
                        .POST, "/users/register", #"{"email": "\#(email)", "password": "pw", "name": "\#(name)"}"#)
                    #expect(registered.status == 200, "\(registered.text)")
                }
                let put = try await cluster.send(.PUT, "/emailtemplate/welcome", Self.template, key: .serverCode)
                #expect(
                    put.status == 200
                        && (put.json["bodyparts"] as? [String: Any])?["textmessage"] as? String
                            == "Hello {Users.name}, code {code} {unknown}",
                    "\(put.text)")
                #expect(try await cluster.send(.GET, "/emailtemplate/welcome", key: .serverCode).text == put.text)
                #expect(try await cluster.send(.GET, "/emailtemplate", key: .serverCode).text == #"["welcome"]"#)

                let send = #"""
                    {"template-name": "welcome", "addresses": ["x@example.com"], "cc-addresses": ["y@example.com"],
                     "criteria": "name LIKE 'A%' OR name = 'Bob'", "template-values": {"code": 42, "name": "friend"}}
                    """#
                let sent = try await cluster.send(.POST, "/emailtemplate/send", send, key: .serverCode)
                #expect(sent.json["status"] as? String == "PUBLISHED" && sent.json["sent"] as? Int == 3, "\(sent.text)")
                let mails = try sink.messages()
                #expect(mails.count == 3)
                let listed = try #require(
                    mails.first { ($0["recipients"] as? [String]) == ["x@example.com", "y@example.com"] })
                #expect(
                    listed["text"] as? String == "Hello {Users.name}, code 42 {unknown}\n"
                        || listed["text"] as? String == "Hello {Users.name}, code 42 {unknown}")
                #expect((listed["headers"] as? [String: Any])?["subject"] as? String == "Hi friend")
                let ann = try #require(mails.first { ($0["recipients"] as? [String]) == ["ann@example.com"] })
                #expect((ann["text"] as? String)?.hasPrefix("Hello Ann <b>, code 42 {unknown}") == true, "\(ann)")
                #expect(
                    (ann["html"] as? String)?.contains("<p>Ann &lt;b&gt;</p><style>p { color: red }</style>") == true,
                    "\(ann)")
                #expect(mails.contains { ($0["recipients"] as? [String]) == ["bob@example.com"] })

                // With uniqueEmails (the default) a found user already listed gets only the listed email.
                let unique =
                    #"{"template-name": "welcome", "addresses": ["ann@example.com"], "criteria": "name = 'Ann <b>' OR name = 'Carl'"}"#
                #expect(
                    try await cluster.send(.POST, "/emailtemplate/send", unique, key: .serverCode).json["sent"] as? Int
                        == 2)
                let twice = unique.replacingOccurrences(of: #""criteria""#, with: #""uniqueEmails": false, "criteria""#)
                #expect(
                    try await cluster.send(.POST, "/emailtemplate/send", twice, key: .serverCode).json["sent"] as? Int
                        == 3)
                #expect(try sink.messages().count == 8)

                #expect(
                    try await cluster.send(.DELETE, "/emailtemplate/welcome", key: .serverCode).json["result"] as? Bool
                        == true)
                let gone = try await cluster.send(
                    .POST, "/emailtemplate/send", #"{"template-name": "welcome", "addresses": ["x@example.com"]}"#,
                    key: .serverCode)
                #expect(
                    gone.status == 404 && gone.json["code"] as? Int == 24002
                        && gone.json["message"] as? String == "Email Template with name 'welcome' doesn't exist.")
            }
        }
    }

    @Test func badRequestsAreRefusedBeforeAnyEmail() async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                #expect(try await cluster.send(.PUT, "/emailtemplate/t", Self.template, key: .serverCode).status == 200)
                typealias Refusal = (
                    method: HTTPMethod, path: String, body: String?, key: APIKeyKind, status: Int, code: Int
                )
                let refused: [Refusal] = [
                    (.PUT, "/emailtemplate/t2", Self.template, .rest, 403, 4000),
                    (.GET, "/emailtemplate/t", nil, .rest, 403, 4000),
                    // The JS SDK's messaging.js: a client key reaches the template lookup.
                    (
                        .POST, "/emailtemplate/send", #"{"template-name": "nope", "addresses": ["a@b.co"]}"#, .js, 404,
                        24002
                    ),
                    (.PUT, "/emailtemplate/t2", #"{"bodyparts": {"textmessage": "x"}}"#, .serverCode, 400, 5101),
                    (
                        .PUT, "/emailtemplate/t2", #"{"subject": "two\nlines", "bodyparts": {"textmessage": "x"}}"#,
                        .serverCode, 400, 5101
                    ),
                    (.PUT, "/emailtemplate/t2", #"{"subject": "s"}"#, .serverCode, 400, 5101),
                    (
                        .PUT, "/emailtemplate/t2", #"{"subject": "s", "bodyparts": {"textmessage": 5}}"#, .serverCode,
                        400, 5101
                    ),
                    (.PUT, "/emailtemplate/t2", "{", .serverCode, 400, 5101),
                    (.GET, "/emailtemplate/nope", nil, .serverCode, 404, 24002),
                    (.DELETE, "/emailtemplate/nope", nil, .serverCode, 404, 24002),
                    (.POST, "/emailtemplate/send", #"{"addresses": ["a@b.co"]}"#, .serverCode, 400, 5101),
                    (.POST, "/emailtemplate/send", #"{"template-name": "t"}"#, .serverCode, 400, 5101),
                    (
                        .POST, "/emailtemplate/send", #"{"template-name": "nope", "addresses": ["a@b.co"]}"#,
                        .serverCode, 404, 24002
                    ),
                    (
                        .POST, "/emailtemplate/send",
                        #"{"template-name": "t", "addresses": ["a@b.co"], "criteria": "name = "}"#, .serverCode, 400,
                        5101
                    ),
                    (
                        .POST, "/emailtemplate/send",
                        #"{"template-name": "t", "addresses": ["a@b.co"], "template-values": {"x": [1]}}"#, .serverCode,
                        400, 5101
                    ),
                    (
                        .POST, "/emailtemplate/send",
                        #"{"template-name": "t", "addresses": ["a@b.co"], "attachment": ["f.txt"]}"#, .serverCode, 404,
                        6000
                    ),
                    (
                        .POST, "/emailtemplate/send", #"{"template-name": "t", "addresses": "a@b.co"}"#, .serverCode,
                        400, 5101
                    ),
                    (
                        .POST, "/emailtemplate/send",
                        #"{"template-name": "t", "addresses": ["a@b.co"], "uniqueEmails": "yes"}"#, .serverCode, 400,
                        5101
                    ),
                    // One bad address stops the whole send before the first email.
                    (
                        .POST, "/emailtemplate/send",
                        #"{"template-name": "t", "addresses": ["a@b.co"], "bcc-addresses": ["not an address"]}"#,
                        .serverCode, 400, 5101
                    ),
                ]
                for (method, path, body, key, status, code) in refused {
                    let answer = try await cluster.send(method, path, body, key: key)
                    #expect(
                        answer.status == status && answer.json["code"] as? Int == code,
                        "\(method) \(path) \(body ?? ""): \(answer.text)")
                }
                #expect(try sink.messages().isEmpty)
                #expect(
                    try await cluster.send(.GET, "/emailtemplate", key: .serverCode).text == #"["t"]"#,
                    "refused templates were not stored")
            }
        }
    }

    @Test func aCriteriaFindingMoreThanTheLimitSendsNothing() async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                #expect(try await cluster.send(.PUT, "/emailtemplate/t", Self.template, key: .serverCode).status == 200)
                let limit = TemplateSend.criteriaLimit
                for batch in stride(from: 0, through: limit, by: 10) {
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for index in batch..<min(batch + 10, limit + 1) {
                            group.addTask {
                                try await cluster.send(
                                    .POST, "/users/register",
                                    #"{"email": "u\#(index)@example.com", "password": "pw", "name": "many"}"#
                                ).status
                            }
                        }
                        for try await status in group { #expect(status == 200) }
                    }
                }
                let send = #"{"template-name": "t", "criteria": "name = 'many'"}"#
                let refused = try await cluster.send(.POST, "/emailtemplate/send", send, key: .serverCode)
                #expect(refused.status == 400 && refused.json["code"] as? Int == 5101, "\(refused.text)")
                // Exactly the limit is allowed.
                let exactly = #"{"template-name": "t", "criteria": "name = 'many' AND email != 'u0@example.com'"}"#
                let sent = try await cluster.send(.POST, "/emailtemplate/send", exactly, key: .serverCode)
                #expect(sent.json["sent"] as? Int == limit, "\(sent.text)")
                #expect(try sink.messages().count == limit)
            }
        }
    }

    @Test func placeholdersFillOnlyWhatTheValuesName() {
        let values = ["a": "<1>", "Users.b": "two\nlines"]
        #expect(Placeholders.fill("{a}{b}{Users.b}{a", values, escape: { $0 }) == "<1>{b}two\nlines{a")
        #expect(Placeholders.fill("x{a}y", values, escape: \.htmlEscaped) == "x&lt;1&gt;y")
        #expect(Placeholders.fill("{{a}}", values, escape: { $0 }) == "{<1>}")
        #expect(Placeholders.fill("no braces", values, escape: { _ in "!" }) == "no braces")
        let email = EmailTemplate(name: "t", subject: "S {Users.b}", text: nil, html: "{a}").rendered(
            to: .init(to: ["a@b.co"]), values: values)
        #expect(email.subject == "S two lines" && email.html == "&lt;1&gt;" && email.text == nil)
    }
}
