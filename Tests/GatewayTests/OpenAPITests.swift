import Foundation
import InternalProtocol
import TestSupport
import Testing

/// `openapi.json`: a valid OpenAPI 3.1 document (PyPI's openapi-spec-validator) describing
/// exactly the routes the services serve, each with its summary, parameters and answers.
@Suite(.timeLimit(.minutes(20))) struct OpenAPITests {
    @Test func theDescriptionIsValidOpenAPI31() async throws {
        try await TestCluster.shared { cluster async throws in
            let root = try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/openapi.json")
            #expect(root.status == 200)
            #expect(root.headers.first(name: "content-type") == "application/json")
            let keyed = try await HTTPTestClient.send(.GET, cluster.gatewayURL + cluster.prefix() + "/openapi.json")
            #expect(keyed.status == 200 && keyed.body == root.body)
            let wrongKey = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + "/\(cluster.app.id)/nokey/openapi.json")
            #expect(wrongKey.status == 401 && wrongKey.json["code"] as? Int == 2002)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "openapi-\(UUID().uuidString).json")
            try root.body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let check = try await ToolRun.run(["python3", "Tests/Peers/check-openapi.py", file.path])
            #expect(check.status == 0, "\(check.output.prefix(4_000))")
            #expect(check.output.contains("valid"))
        }
    }

    /// Every route of every service's manifest (what its router serves, built from the same
    /// declarations) is in the document and nothing else is; each says what it does and declares
    /// every parameter of its path.
    @Test func theDescriptionListsEveryServedRouteAndNothingElse() async throws {
        try await TestCluster.shared { cluster async throws in
            let document = try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/openapi.json").json
            let paths = try #require(document["paths"] as? [String: [String: [String: any Sendable]]])
            var documented: Set<String> = []
            for (path, operations) in paths {
                for (method, operation) in operations {
                    documented.insert("\(method.uppercased()) \(path)")
                    let summary = operation["summary"] as? String ?? ""
                    #expect(!summary.isEmpty && summary != "Undescribed", "\(method) \(path)")
                    let parameters = operation["parameters"] as? [[String: any Sendable]] ?? []
                    let inPath = Set(
                        parameters.filter { $0["in"] as? String == "path" }.compactMap { $0["name"] as? String })
                    #expect(inPath == Self.templateParameters(path), "\(method) \(path)")
                    let responses = operation["responses"] as? [String: any Sendable] ?? [:]
                    #expect(responses["default"] != nil && responses.count >= 2, "\(method) \(path)")
                }
            }
            var served: Set<String> = ["GET /info", "GET /rt/lookup", "GET /openapi.json"]
            for manifest in try await cluster.manifests() {
                for route in manifest.routes {
                    #expect(route.doc != nil, "\(manifest.service.executable): \(route.method) \(route.path)")
                    served.insert("\(route.method) \(Self.template(route.path))")
                }
            }
            #expect(documented.subtracting(served).sorted() == [])
            #expect(served.subtracting(documented).sorted() == [])
            #expect(served.count > 100)
        }
    }

    /// A created object's answer links to reading, changing and removing it, each link naming an
    /// operation the document has, with the id taken from the answer.
    @Test func createdThingsLinkToTheirReadUpdateAndDelete() async throws {
        try await TestCluster.shared { cluster async throws in
            let document = try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/openapi.json").json
            let paths = try #require(document["paths"] as? [String: [String: [String: any Sendable]]])
            let operationIDs = Set(paths.values.flatMap { $0.values.compactMap { $0["operationId"] as? String } })
            let answer = (paths["/data/{table}"]?["post"]?["responses"] as? [String: any Sendable])?["200"]
            let links = try #require((answer as? [String: any Sendable])?["links"] as? [String: [String: any Sendable]])
            #expect(links["ReadObject"]?["operationId"] as? String == "get_data_table_id")
            let parameters = links["DeleteObject"]?["parameters"] as? [String: String]
            #expect(parameters == ["table": "$request.path.table", "id": "$response.body#/objectId"])
            var linked = 0
            for operations in paths.values {
                for operation in operations.values {
                    for answer in (operation["responses"] as? [String: [String: any Sendable]] ?? [:]).values {
                        for link in (answer["links"] as? [String: [String: any Sendable]] ?? [:]).values {
                            linked += 1
                            #expect(operationIDs.contains(link["operationId"] as? String ?? ""), "\(link)")
                        }
                    }
                }
            }
            #expect(linked >= 15)
        }
    }

    /// `data/:table/:id` as `/data/{table}/{id}`, a catch-all as `{path}`; `{table}.json` as it is.
    static func template(_ path: String) -> String {
        "/"
            + path.split(separator: "/").map {
                $0 == "**" ? "{path}" : $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0)
            }
            .joined(separator: "/")
    }

    /// The `{name}` in each segment (`{table}.json` names `table`).
    static func templateParameters(_ path: String) -> Set<String> {
        Set(
            path.split(separator: "/").compactMap { segment in
                guard let open = segment.firstIndex(of: "{"), let close = segment.firstIndex(of: "}") else {
                    return nil
                }
                return String(segment[segment.index(after: open)..<close])
            })
    }
}
