import Configuration
import DataEngine
import Foundation
import InternalProtocol
import NIOCore
import PostgresSupport
import ServiceRuntime

/// files-service: every app's file tree (contract §4): metadata in PostgreSQL, bytes in a
/// ``FileStorage``, uploads and downloads streamed.
///
/// Configuration: `BAAS_FILES_ROOT` (the local storage directory, default `.local/files`),
/// `BAAS_FILES_PUBLIC_URL` (the gateway's public base URL in file URLs, default
/// `http://localhost:8080`), `BAAS_FILES_MAX_UPLOAD_BYTES` (default 5 GiB),
/// `BAAS_FILES_IDLE_TIMEOUT_SECONDS` (how long a transfer may stay silent, default 60),
/// `BAAS_FILES_DELETE_GRACE_SECONDS` (how long replaced bytes stay readable for downloads
/// under way, default 60) and `BAAS_FILES_GARBAGE_INTERVAL_SECONDS` (default 30).
/// `BAAS_FILES_URL_ALLOWED_HOSTS` (comma-separated `host:port`, or a bare `host` for its ports
/// 80 and 443) names where an upload from a URL may fetch even though the host resolves to
/// loopback or private addresses (development and tests).
/// Image sizes: `BAAS_FILES_IMAGE_MAX_PIXELS` (default 64,000,000), `BAAS_FILES_IMAGE_MAX_BYTES`
/// (the largest original, default 64 MiB), `BAAS_FILES_IMAGE_MAX_SIDE` (default 4096),
/// `BAAS_FILES_IMAGE_CONCURRENCY` (resizes at once, default 2), `BAAS_FILES_IMAGE_QUEUE` (how
/// many may wait, default 16) and `BAAS_FILES_SCRATCH` (working files, default the system's
/// temporary directory).
/// `BAAS_FILES_STORAGE=s3` stores bytes in an S3-compatible bucket instead of `BAAS_FILES_ROOT`:
/// `BAAS_FILES_S3_ENDPOINT`, `BAAS_FILES_S3_BUCKET`, `BAAS_FILES_S3_REGION` (default
/// `us-east-1`), `BAAS_FILES_S3_ACCESS_KEY_ID` and `BAAS_FILES_S3_SECRET_ACCESS_KEY`.
package enum FilesService: BackendService {
    package static let name = ServiceName.files

    package static let migrations: [any DatabaseMigration] = FileMigrations.all

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let reader = environment.configuration.reader.scoped(to: "files")
        let grace = reader.int(forKey: "deleteGraceSeconds", default: 60)
        let interval = reader.int(forKey: "garbageIntervalSeconds", default: 30)
        let upload = reader.int(forKey: "maxUploadBytes", default: 5 << 30)
        let idle = reader.int(forKey: "idleTimeoutSeconds", default: 60)
        guard grace >= 0, interval >= 1, upload >= 1, idle >= 1 else {
            throw UsageError("BAAS_FILES_* settings must be positive (the grace may be 0)")
        }
        let catalog = FileCatalog(
            database: environment.database, logger: environment.logger, deletionGrace: Int64(grace) * 1000)
        let storage = try storage(reader)
        environment.background.add(GarbageCollector(catalog: catalog, storage: storage, interval: .seconds(interval)))
        let urls = FileURLs(
            publicURL: String(reader.string(forKey: "publicUrl", default: "http://localhost:8080").trimmingSuffix("/")))
        let allowed = reader.string(forKey: "urlAllowedHosts", default: "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        let sources = URLSource(allowList: try SourceAllowList(parsing: allowed), idleTimeout: .seconds(Int64(idle)))
        let engine = DataEngine(
            database: environment.database, logger: environment.logger, prepared: environment.preparedStatements)
        environment.background.add(engine.listener)
        let objects = ObjectFiles(engine: engine, logger: environment.logger)
        let files = FileRoutes(
            catalog: catalog, storage: storage, urls: urls,
            limits: FileLimits(upload: upload, idleTimeout: .seconds(idle)),
            sources: sources,
            renditions: try renditions(reader, catalog: catalog, storage: storage, environment: environment),
            objects: objects)
        routes.publish(FileSchemas.all)
        routes.pathParameters = ["path": FileDocs.path.examples(.text(DocumentExamples.filePath))]
        routes.removalPathParameters = ["path": FileDocs.path.examples(.text(DocumentExamples.disposableFile))]
        files.add(to: &routes)
        FileContentOperations(catalog: catalog, storage: storage, objects: objects).register(in: &operations)
        routes.pathParameters = DocumentExamples.dataPathParameters
        routes.removalPathParameters = DocumentExamples.dataRemovalPathParameters
        FileFieldRoutes(files: files, engine: engine).add(to: &routes)
    }
}

extension FilesService {
    /// Image sizes with the configured bounds; starts libvips.
    static func renditions(
        _ reader: ConfigReader, catalog: FileCatalog, storage: any FileStorage, environment: ServiceEnvironment
    ) throws -> Renditions {
        let images = reader.scoped(to: "image")
        let limits = ImageLimits(
            maxPixels: images.int(forKey: "maxPixels", default: 64_000_000),
            maxBytes: Int64(images.int(forKey: "maxBytes", default: 64 << 20)),
            maxSide: images.int(forKey: "maxSide", default: 4096),
            concurrency: images.int(forKey: "concurrency", default: 2), queue: images.int(forKey: "queue", default: 16))
        guard limits.maxPixels >= 1, limits.maxBytes >= 1, limits.maxSide >= 1, limits.concurrency >= 1,
            limits.queue >= 0
        else {
            throw UsageError("BAAS_FILES_IMAGE_* settings must be positive (the queue may be 0)")
        }
        try ImageResizer.start()
        let threads = ResizeThreads(count: limits.concurrency)
        environment.background.add(threads)
        return Renditions(
            catalog: catalog, storage: storage,
            resizer: ImageResizer(maxPixels: limits.maxPixels, logger: environment.logger), threads: threads.pool,
            gate: ResizeGate(running: limits.concurrency, waiting: limits.queue), limits: limits,
            scratch: reader.string(forKey: "scratch", default: NSTemporaryDirectory() + "baas-files"))
    }

    /// The configured storage backend.
    static func storage(_ reader: ConfigReader) throws -> any FileStorage {
        switch reader.string(forKey: "storage", default: "local") {
        case "local":
            return LocalDiskStorage(root: reader.string(forKey: "root", default: ".local/files"))
        case "s3":
            let s3 = reader.scoped(to: "s3")
            func required(_ key: String, _ name: String) throws -> String {
                guard let value = s3.string(forKey: ConfigKey(key)), !value.isEmpty else {
                    throw UsageError("BAAS_FILES_STORAGE=s3 needs BAAS_FILES_S3_\(name)")
                }
                return value
            }
            return S3Storage(
                configuration: .init(
                    endpoint: try required("endpoint", "ENDPOINT"), bucket: try required("bucket", "BUCKET"),
                    region: s3.string(forKey: "region", default: "us-east-1"),
                    accessKeyID: try required("accessKeyId", "ACCESS_KEY_ID"),
                    secretAccessKey: try required("secretAccessKey", "SECRET_ACCESS_KEY")))
        case let other:
            throw UsageError("BAAS_FILES_STORAGE must be local or s3, not \(other)")
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        var text = Substring(self)
        while text.hasSuffix(suffix) { text = text.dropLast(suffix.count) }
        return text
    }
}
