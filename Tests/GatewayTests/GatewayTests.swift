import Foundation
import InternalProtocol
import TestSupport
import Testing

/// The gateway in front of the real services (all started in this process).
@Suite(.timeLimit(.minutes(20))) struct GatewayTests {
    static let invalidAppInfo =
        #"{"code":2002,"message":"Invalid application info (application id or api key)","status":401}"#

    @Test func wrongOrMissingAppOrKeyIs401With2002() async throws {
        try await TestCluster.shared { cluster async throws in
            let app = cluster.app
            let paths = [
                "/\(UUID().uuidString)/\(app.keys[.rest]!)/info", "/\(app.id)/\(UUID().uuidString)/info",
                "/\(app.id)", "/\(app.id)/", "/\(app.id)//info", "/not-a-uuid/key/info", "/api/info",
                "/\(app.id)/' OR 1=1 --/info".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!,
            ]
            for path in paths {
                let answer = try await HTTPTestClient.send(.GET, cluster.gatewayURL + path)
                #expect(answer.status == 401, "\(path)")
                #expect(answer.text == Self.invalidAppInfo, "\(path)")
                #expect(answer.headers.first(name: "content-type") == "application/json")
                #expect(answer.headers.first(name: "x-request-id") != nil)
            }
            let keyless = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + "/api/info", headers: [("application-id", app.id)])
            #expect(keyless.status == 401)
        }
    }

    @Test func eachKeyKindGetsItsRole() async throws {
        try await TestCluster.shared { cluster async throws in
            for kind in APIKeyKind.allCases {
                let answer = try await HTTPTestClient.send(.GET, cluster.gatewayURL + cluster.prefix(kind) + "/info")
                #expect(answer.status == 200)
                #expect(answer.json["keyKind"] as? String == kind.rawValue)
                #expect(answer.json["roles"] as? [String] == ["NotAuthenticatedUser", kind.role])
                #expect(answer.json["name"] as? String == cluster.app.name)
            }
            let viaHeaders = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + "/api/info",
                headers: [("application-id", cluster.app.id), ("api-key", cluster.app.keys[.js]!)])
            #expect(viaHeaders.json["keyKind"] as? String == "JS")
        }
    }

    @Test func keylessApiPathActsAsTheRESTClientWhenEnabled() async throws {
        try await TestCluster.with(environment: ["BAAS_GATEWAY_KEYLESS_API_PATH": "true"]) { cluster async throws in
            let answer = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + "/api/info", headers: [("application-id", cluster.app.id)])
            #expect(answer.status == 200)
            #expect(answer.json["keyKind"] as? String == "REST")
            let unknown = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + "/api/info", headers: [("application-id", UUID().uuidString)])
            #expect(unknown.status == 401)
            let wrongKey = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + "/api/info",
                headers: [("application-id", cluster.app.id), ("api-key", UUID().uuidString)])
            #expect(wrongKey.status == 401)
        }
    }

    @Test func pathsNoServiceDeclaresAre404AfterTheKeyCheck() async throws {
        try await TestCluster.shared { cluster async throws in
            let unknown = [
                ("POST", "users/no-such-endpoint"), ("PATCH", "data/Person"), ("PATCH", "data/Person/ID/friends"),
                ("PATCH", "data/bulk/Person/delete"), ("GET", "transaction/unit-of-work"), ("PUT", "messaging/default"),
                ("PATCH", "emailtemplate/x"), ("PUT", "files/a/b.txt"), ("POST", "geo/rect"),
            ]
            for (method, path) in unknown {
                let answer = try await HTTPTestClient.send(
                    .init(rawValue: method), cluster.gatewayURL + cluster.prefix() + "/" + path + "?where=x%3D1",
                    body: method == "GET" ? nil : Data("{}".utf8))
                #expect(answer.status == 404)
                #expect(answer.text == #"{"code":404,"message":"No endpoint for \#(method) /\#(path)","status":404}"#)
                let wrongKey = try await HTTPTestClient.send(
                    .init(rawValue: method), cluster.gatewayURL + "/\(cluster.app.id)/\(UUID().uuidString)/" + path)
                #expect(wrongKey.status == 401 && wrongKey.json["code"] as? Int == 2002)
            }
        }
    }

    @Test func unknownPathsAre404WithJSON() async throws {
        try await TestCluster.shared { cluster async throws in
            for (method, path) in [("GET", "/counters/x"), ("POST", "/info"), ("GET", "/info/more")] {
                let answer = try await HTTPTestClient.send(
                    .init(rawValue: method), cluster.gatewayURL + cluster.prefix() + path)
                #expect(answer.status == 404)
                #expect(answer.json["code"] as? Int == 404)
                #expect(answer.headers.first(name: "content-type") == "application/json")
            }
            let banner = try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/")
            #expect(banner.status == 200)
        }
    }

    @Test func oversizedBodiesAre413WithJSON() async throws {
        try await TestCluster.with(environment: ["BAAS_GATEWAY_BODY_LIMIT": "1024"]) { cluster async throws in
            let url = cluster.gatewayURL + cluster.prefix() + "/data/Person"
            let big = try await HTTPTestClient.send(.POST, url, body: Data(repeating: 0x61, count: 4096))
            #expect(big.status == 413)
            #expect(big.json["code"] as? Int == 413)
            let small = try await HTTPTestClient.send(.POST, url, body: Data(repeating: 0x61, count: 512))
            #expect(small.status == 400)
            #expect(small.json["code"] as? Int == 1022)
        }
    }

    @Test func requestIDsAreKeptWhenSaneAndMintedOtherwise() async throws {
        try await TestCluster.shared { cluster async throws in
            let url = cluster.gatewayURL + cluster.prefix() + "/info"
            let kept = try await HTTPTestClient.send(.GET, url, headers: [("x-request-id", "client-id_1")])
            #expect(kept.headers.first(name: "x-request-id") == "client-id_1")
            let minted = try await HTTPTestClient.send(.GET, url, headers: [("x-request-id", "bad id\"; drop")])
            let id = try #require(minted.headers.first(name: "x-request-id"))
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
            let rejected = try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/\(cluster.app.id)/x/info")
            #expect(rejected.headers.first(name: "x-request-id")?.count == 32)
        }
    }

    @Test func browsersGetCORS() async throws {
        try await TestCluster.with(environment: ["BAAS_GATEWAY_CORS_ORIGINS": "https://app.example"]) {
            cluster async throws in
            let url = cluster.gatewayURL + cluster.prefix() + "/info"
            let preflight = try await HTTPTestClient.send(
                .OPTIONS, url,
                headers: [
                    ("origin", "https://app.example"), ("access-control-request-method", "PUT"),
                    ("access-control-request-headers", "user-token"),
                ])
            #expect(preflight.status == 204)
            #expect(preflight.headers.first(name: "access-control-allow-origin") == "https://app.example")
            #expect(preflight.headers.first(name: "access-control-allow-headers")?.contains("user-token") == true)
            let get = try await HTTPTestClient.send(.GET, url, headers: [("origin", "https://app.example")])
            #expect(get.headers.first(name: "access-control-allow-origin") == "https://app.example")
            #expect(get.headers.first(name: "access-control-expose-headers")?.contains("x-request-id") == true)
            let foreign = try await HTTPTestClient.send(.GET, url, headers: [("origin", "https://evil.example")])
            #expect(foreign.status == 200)
            #expect(foreign.headers.first(name: "access-control-allow-origin") == nil)
        }
    }

    @Test func speaksHTTP1AndPriorKnowledgeH2COnOnePort() async throws {
        try await TestCluster.shared { cluster async throws in
            let url = cluster.gatewayURL + cluster.prefix() + "/info"
            for flag in ["--http1.1", "--http2-prior-knowledge"] {
                let output = try await Self.curl([
                    flag, "-s", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url,
                ])
                #expect(output == (flag == "--http1.1" ? "1.1 200" : "2 200"))
            }
        }
    }

    /// curl's output (`-s`: nothing on standard error), bounded; waiting holds no thread.
    static func curl(_ arguments: [String]) async throws -> String {
        try await ToolRun.run(["curl", "--max-time", "60"] + arguments, timeLimit: .seconds(90)).output
    }
}
