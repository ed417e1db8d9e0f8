import Foundation
import TestSupport
import Testing

/// docs/ARCHITECTURE.md's module graph, Package.swift's targets and the code's imports must say
/// the same thing: the graph in the document is what Package.swift declares, and Package.swift
/// declares exactly what each module's sources import. So none of the three can drift.
@Suite struct ArchitectureDocumentTests {
    /// Modules of the toolchain and the system, which no target declares.
    static let systemModules: Set<String> = ["FoundationXML", "FoundationNetworking", "Foundation", "FoundationEssentials", "Glibc", "Darwin", "Dispatch", "Synchronization"]

    /// The document's `<!-- modules -->` block: `Module: dependency dependency …`, in order.
    static func documentedGraph() throws -> [(module: String, dependencies: Set<String>)] {
        let text = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let marker = try #require(text.range(of: "<!-- modules -->\n```\n"))
        let block = try #require(text[marker.upperBound...].range(of: "```"))
        return text[marker.upperBound..<block.lowerBound].split(separator: "\n").compactMap { line in
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), Set(parts[1].split(separator: " ").map(String.init)))
        }
    }

    /// The declared dependencies of every target whose sources are under Sources/ (`.target` and
    /// `.executableTarget` without a `path:`), by a scan of Package.swift's text: a dependency is
    /// a quoted target name or `.product(name: "X", …)`.
    static func declaredGraph() throws -> [String: Set<String>] {
        let text = try String(contentsOf: Fixtures.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var graph: [String: Set<String>] = [:]
        var rest = text[...]
        while let start = rest.range(of: #"\.(target|executableTarget)\("#, options: .regularExpression) {
            // The call's text, up to its closing parenthesis.
            var depth = 0
            var end = start.lowerBound
            for index in rest[start.lowerBound...].indices {
                let character = rest[index]
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1; if depth == 0 { end = index; break } }
            }
            let call = String(rest[start.lowerBound...end])
            rest = rest[rest.index(after: end)...]
            guard !call.contains("path:"), let name = call.firstMatch(of: /name: "([^"]+)"/)?.1 else { continue }
            var dependencies: Set<String> = []
            if let list = call.firstMatch(of: /dependencies: \[([^\]]*)\]/)?.1 {
                var remaining = String(list)
                for product in remaining.matches(of: /\.product\(name: "([^"]+)", package: "[^"]+"\)/) {
                    dependencies.insert(String(product.1))
                }
                remaining = remaining.replacing(/\.product\([^)]*\)/, with: "")
                for target in remaining.matches(of: /"([^"]+)"/) { dependencies.insert(String(target.1)) }
            }
            graph[String(name)] = dependencies
        }
        return graph
    }

    /// The modules a target's sources import (`import X`, `@preconcurrency import X`, `import struct X.Y`).
    static func imports(of module: String) throws -> Set<String> {
        let folder = Fixtures.root.appendingPathComponent("Sources").appendingPathComponent(module)
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        var found: Set<String> = []
        for file in files where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                if let match = line.firstMatch(of: /^(?:@\w+ )*(?:public |package |internal )?import (?:class |struct |enum |func |protocol |typealias )?(\w+)/) {
                    found.insert(String(match.1))
                }
            }
        }
        return found.subtracting(systemModules)
    }

    @Test func theDocumentedGraphIsPackageSwifts() throws {
        let documented = try Self.documentedGraph()
        let declared = try Self.declaredGraph()
        #expect(Set(documented.map(\.module)) == Set(declared.keys), "modules in the document against Package.swift's Sources targets")
        for (module, dependencies) in documented {
            #expect(dependencies == declared[module], "\(module): the document says \(dependencies.sorted()), Package.swift \(declared[module]?.sorted() ?? [])")
        }
    }

    @Test func eachModuleImportsOnlyModulesListedBeforeIt() throws {
        let documented = try Self.documentedGraph()
        let modules = Set(documented.map(\.module))
        var listed: Set<String> = []
        for (module, dependencies) in documented {
            let ownModules = dependencies.intersection(modules)
            #expect(ownModules.isSubset(of: listed), "\(module) depends on \(ownModules.subtracting(listed).sorted()), listed after it")
            listed.insert(module)
        }
    }

    @Test func packageSwiftDeclaresExactlyWhatTheCodeImports() throws {
        for (module, declared) in try Self.declaredGraph() {
            let imported = try Self.imports(of: module)
            #expect(imported == declared, "\(module) imports \(imported.sorted()) but declares \(declared.sorted())")
        }
    }

    /// The two front documents stay short (issue 29): the README is the two commands, a tour and
    /// links; the architecture is modules, seams and choices, with timings in PERFORMANCE.md.
    @Test func theFrontDocumentsStayShort() throws {
        let readme = try String(contentsOf: Fixtures.root.appendingPathComponent("README.md"), encoding: .utf8)
        let architecture = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 120)
        #expect(architecture.split(separator: "\n", omittingEmptySubsequences: false).count <= 350)
    }
}
