import Foundation
import InternalProtocol

/// The API's OpenAPI 3.1 description, built from the manifests the gateway routes by (each
/// route's ``RouteDoc`` and each service's schemas), so it describes exactly what is served.
/// Paths are relative to the app prefix `/{appId}/{apiKey}` (or `/api` with the keys in headers).
struct OpenAPIDocument: Encodable {
    let openapi = "3.1.0"
    let info = Info()
    let servers = [Server.appPrefix, Server.api]
    let paths: [String: [String: Operation]]
    let components: Components
    /// Every operation may be called with or without a user's token.
    let security: [[String: [String]]] = [[:], ["userToken": []]]

    struct Info: Encodable {
        let title = "BaaS REST API"
        let version = "1.0.0"
        let description = """
            The Backendless REST dialect this server speaks. Paths follow the app prefix \
            /{appId}/{apiKey}; failures answer {"code", "message"} with a fitting HTTP status.
            """
    }

    struct Server: Encodable {
        let url: String
        let description: String
        var variables: [String: Variable]?

        struct Variable: Encodable {
            let `default`: String
            let description: String
        }

        static let appPrefix = Server(
            url: "/{appId}/{apiKey}", description: "An app's REST prefix",
            variables: [
                "appId": Variable(default: "APP_ID", description: "The application id"),
                "apiKey": Variable(default: "API_KEY", description: "One of the app's API keys"),
            ])
        static let api = Server(
            url: "/api", description: "The app and key in application-id and api-key headers", variables: nil)
    }

    struct Operation: Encodable {
        let operationId: String
        let summary: String
        let description: String?
        let tags: [String]
        let parameters: [Parameter]?
        let requestBody: RequestBody?
        var responses: [String: Answer]
    }

    struct Parameter: Encodable {
        let name: String
        let `in`: String
        let required: Bool
        let description: String?
        let schema: APISchema
    }

    struct RequestBody: Encodable {
        let required: Bool
        let content: [String: MediaType]
    }

    struct MediaType: Encodable {
        let schema: APISchema
    }

    struct Answer: Encodable {
        let description: String
        let content: [String: MediaType]?
        var links: [String: LinkObject]? = nil
    }

    struct LinkObject: Encodable {
        let operationId: String
        let parameters: [String: String]
    }

    /// A route's link to a route no service declares.
    struct LinkTargetMissing: Error, CustomStringConvertible {
        let link: RouteDoc.Link
        var description: String { "link \(link.name) leads to \(link.method) \(link.path), which no service serves" }
    }

    struct Components: Encodable {
        let schemas: [String: APISchema]
        let securitySchemes = [
            "userToken": SecurityScheme(
                type: "apiKey", name: "user-token", in: "header", description: "A logged-in user's token")
        ]
    }

    struct SecurityScheme: Encodable {
        let type: String
        let name: String
        let `in`: String
        let description: String
    }

    /// Two services describing one schema name differently: the document would be ambiguous.
    struct SchemaConflict: Error, CustomStringConvertible {
        let name: String
        var description: String { "schema \(name) is described differently by two services" }
    }

    /// The description of `manifests`' routes, with their schemas and the common ones.
    init(_ manifests: [RouteManifest]) throws {
        var schemas = CommonSchemas.all
        var paths: [String: [String: Operation]] = [:]
        for manifest in manifests {
            for (name, schema) in manifest.schemas {
                guard schemas[name] == nil || schemas[name] == schema else { throw SchemaConflict(name: name) }
                schemas[name] = schema
            }
            for route in manifest.routes {
                paths[Self.template(route.path), default: [:]][route.method.lowercased()] = Self.operation(
                    route, service: manifest.service)
            }
        }
        self.paths = try Self.linked(paths, manifests)
        self.components = Components(schemas: schemas)
    }

    /// `paths` with each route's links on its successful answers; every link must lead to a
    /// route some service serves.
    private static func linked(_ paths: [String: [String: Operation]], _ manifests: [RouteManifest]) throws
        -> [String: [String: Operation]]
    {
        var paths = paths
        for route in manifests.flatMap(\.routes) {
            guard let doc = route.doc, !doc.links.isEmpty else { continue }
            var links: [String: LinkObject] = [:]
            for link in doc.links {
                guard let target = paths[template(link.path)]?[link.method.lowercased()] else {
                    throw LinkTargetMissing(link: link)
                }
                links[link.name] = LinkObject(operationId: target.operationId, parameters: link.parameters)
            }
            let key = template(route.path)
            let method = route.method.lowercased()
            guard var operation = paths[key]?[method] else { continue }
            for status in [doc.status] + doc.otherStatuses { operation.responses[String(status)]?.links = links }
            paths[key]?[method] = operation
        }
        return paths
    }

    /// The document as JSON.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// `data/:table/:id` as `/data/{table}/{id}`; a catch-all `**` as `{path}`; a segment with a
    /// suffix (`{table}.json`) as it is.
    static func template(_ path: String) -> String {
        "/" + segments(path).map(\.template).joined(separator: "/")
    }

    /// A path's segments: literals, and parameters by name.
    static func segments(_ path: String) -> [(literal: String, parameter: String?, template: String)] {
        path.split(separator: "/").map { segment in
            let literal = String(segment)
            if segment == "**" { return (literal, catchAllParameter, "{\(catchAllParameter)}") }
            if segment.hasPrefix(":") { return (literal, String(segment.dropFirst()), "{\(segment.dropFirst())}") }
            if let open = segment.firstIndex(of: "{"), let close = segment.firstIndex(of: "}"), open < close {
                return (literal, String(segment[segment.index(after: open)..<close]), literal)
            }
            return (literal, nil, literal)
        }
    }

    /// The name a catch-all segment is published under.
    static let catchAllParameter = "path"

    private static func operation(_ route: RouteDescriptor, service: ServiceName) -> Operation {
        let doc = route.doc ?? RouteDoc("Undescribed", json: .any)
        let pathParameters = segments(route.path).compactMap(\.parameter).map { name in
            Parameter(
                name: name, in: "path", required: true,
                description: name == catchAllParameter ? "The rest of the path; it may hold slashes" : nil,
                schema: doc.path[name] ?? APISchema(types: ["string"]).length(1))
        }
        let queryParameters = doc.query.map {
            Parameter(name: $0.name, in: "query", required: $0.required, description: $0.description, schema: $0.schema)
        }
        let parameters = pathParameters + queryParameters
        var responses = [
            "default": Answer(description: "The error", content: ["application/json": MediaType(schema: .ref("Error"))])
        ]
        for status in [doc.status] + doc.otherStatuses {
            responses[String(status)] = Answer(description: doc.summary, content: content(doc.answer))
        }
        return Operation(
            operationId: operationID(route, service: service), summary: doc.summary,
            description: route.permission.map {
                "Checks the \($0.operation) permission on {\($0.containerParameter)}."
            },
            tags: [service.executable], parameters: parameters.isEmpty ? nil : parameters,
            requestBody: doc.body.map {
                RequestBody(required: $0.required, content: [$0.mediaType: MediaType(schema: $0.schema)])
            },
            responses: responses)
    }

    /// An answer's content; none for answers without a body.
    private static func content(_ body: RouteDoc.Body) -> [String: MediaType]? {
        body.mediaType.isEmpty ? nil : [body.mediaType: MediaType(schema: body.schema)]
    }

    /// `get_data_table_id`: unique per method and path.
    private static func operationID(_ route: RouteDescriptor, service: ServiceName) -> String {
        let words = segments(route.path).map { $0.parameter ?? $0.literal }
        let name = ([route.method.lowercased()] + words).joined(separator: "_")
        return String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}
