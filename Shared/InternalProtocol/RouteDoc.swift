/// What a public route does, for the API's published description (`openapi.json`): written
/// beside the route's handler, carried in its ``RouteDescriptor``. Path parameters come from
/// the route's path; every route may also answer the error envelope.
package struct RouteDoc: Codable, Sendable, Hashable {
    /// One line saying what the route does.
    package var summary: String
    /// Its query parameters.
    package var query: [QueryParameter]
    /// Its request body, if it takes one.
    package var body: Body?
    /// Its successful answer.
    package var answer: Body
    /// The successful answer's status.
    package var status: Int
    /// Other successful statuses answering the same body (201 when created, 200 when it was there).
    package var otherStatuses: [Int] = []
    /// Path parameters' schemas by name (a parameter without one is a non-empty string); a
    /// service's ``PublicRoutes/pathParameters`` fill in those a route leaves out.
    package var path: [String: APISchema] = [:]
    /// What a successful answer lets a client do next (OpenAPI links): a created object read,
    /// changed or removed with the id the answer carries.
    package var links: [Link] = []

    /// One link: the route it leads to (method and path as declared) and how that route's
    /// parameters come from this call (`$request.path.table`, `$response.body#/objectId`).
    package struct Link: Codable, Sendable, Hashable {
        package var name: String
        package var method: String
        package var path: String
        package var parameters: [String: String]

        /// Creates a link.
        package init(_ name: String, _ method: String, _ path: String, _ parameters: [String: String]) {
            self.name = name
            self.method = method
            self.path = path
            self.parameters = parameters
        }
    }

    /// A query parameter.
    package struct QueryParameter: Codable, Sendable, Hashable {
        package var name: String
        package var schema: APISchema
        package var description: String?
        package var required: Bool

        /// Creates a parameter.
        package init(
            _ name: String, _ schema: APISchema = .string, _ description: String? = nil, required: Bool = false
        ) {
            self.name = name
            self.schema = schema
            self.description = description
            self.required = required
        }
    }

    /// A body: its media type and schema.
    package struct Body: Codable, Sendable, Hashable {
        package var mediaType: String
        package var schema: APISchema
        /// For a request body: whether the route needs one.
        package var required: Bool

        /// Creates a body.
        package init(mediaType: String, schema: APISchema, required: Bool = true) {
            self.mediaType = mediaType
            self.schema = schema
            self.required = required
        }

        /// A JSON body of `schema`.
        package static func json(_ schema: APISchema, required: Bool = true) -> Body {
            Body(mediaType: "application/json", schema: schema, required: required)
        }

        /// No body (an answer of status 204, a redirect).
        package static let none = Body(mediaType: "", schema: .any)

        /// Bytes of any type (a file).
        package static let bytes = Body(mediaType: "application/octet-stream", schema: .binary)

        /// A multipart form with one or more files (uploads).
        package static let upload = Body(
            mediaType: "multipart/form-data",
            schema: APISchema.object(["file": .binary]).examples(.members(["file": "Hello"])))
    }

    /// Creates a description: `summary`, then the query parameters, the request body and the
    /// answer (JSON of `answer` with status 200 unless told).
    package init(
        _ summary: String, query: [QueryParameter] = [], body: Body? = nil, answer: Body, status: Int = 200
    ) {
        self.summary = summary
        self.query = query
        self.body = body
        self.answer = answer
        self.status = status
    }

    /// This description with `schema` for the path parameter `name`.
    package func path(_ name: String, _ schema: APISchema) -> RouteDoc {
        var doc = self
        doc.path[name] = schema
        return doc
    }

    /// This description with links to `targets` (name, method, path), whose parameters come
    /// from `parameters`.
    package func linking(_ targets: [(String, String, String)], _ parameters: [String: String]) -> RouteDoc {
        var doc = self
        doc.links += targets.map { Link($0.0, $0.1, $0.2, parameters) }
        return doc
    }

    /// Creates a description answering JSON of `answer`.
    package init(
        _ summary: String, query: [QueryParameter] = [], body: Body? = nil, json answer: APISchema, status: Int = 200
    ) {
        self.init(summary, query: query, body: body, answer: .json(answer), status: status)
    }
}
