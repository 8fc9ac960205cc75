// A temporary tree declared with a result builder (`Tree { Dir("tmp") { File("a.dat", age: .hours(25)) } }`),
// built through directory descriptors with exact times. Never chdirs, never touches anything outside its folder.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoragePolicy
import CPosix

/// One thing in a test tree.
public protocol TreeNode {
    /// Creates the node inside the open directory `parent`; times are set relative to `now`.
    func create(in parent: Int32, now: Int64) throws
    /// Sets the node's declared times again, relative to a later `now` (`Tree` reads its clock after writing).
    func retime(in parent: Int32, now: Int64) throws
}

extension TreeNode {
    /// A node without declared times has nothing to set again.
    public func retime(in parent: Int32, now: Int64) throws {}
}

@resultBuilder
public enum TreeBuilder {
    public static func buildBlock(_ nodes: [any TreeNode]...) -> [any TreeNode] { nodes.flatMap { $0 } }
    public static func buildExpression(_ node: any TreeNode) -> [any TreeNode] { [node] }
    public static func buildExpression(_ nodes: [any TreeNode]) -> [any TreeNode] { nodes }
    public static func buildOptional(_ nodes: [any TreeNode]?) -> [any TreeNode] { nodes ?? [] }
    public static func buildEither(first nodes: [any TreeNode]) -> [any TreeNode] { nodes }
    public static func buildEither(second nodes: [any TreeNode]) -> [any TreeNode] { nodes }
    public static func buildArray(_ nodes: [[any TreeNode]]) -> [any TreeNode] { nodes.flatMap { $0 } }
}

public struct TreeError: Error, CustomStringConvertible {
    public var description: String
    public init(_ what: String, _ name: [UInt8]) {
        description = "\(what) '\(String(decoding: name, as: UTF8.self))': \(String(cString: strerror(errno)))"
    }
}

/// A temporary directory holding the declared nodes; removed by `remove()`.
public final class Tree {
    /// Absolute path of the tree's root.
    public let root: String
    /// The instant the declared ages are measured from; pass it as PlanOptions.now. Read after the tree is
    /// written (unless given): every entry's ctime is then before it, however long the writing took.
    public let now: Int64

    /// How far past `now` the last ctime of a tree may be: apply keeps an entry whose ctime is later than the
    /// plan's time (plus one second); a tree written over more than that on a busy machine looked "changed
    /// since the plan" (EngineInUseTests failed so on a loaded fresh clone).
    static let settleNs: Int64 = 200_000_000

    /// `now`: the instant the ages are measured from. Given, it is the caller's (which must then not depend on
    /// ctimes: content that encodes dates relative to it, plan-only tests). Left out, the tree is written with
    /// provisional times, the clock is read once it is written, and every declared time is set again from that
    /// reading, until setting them took less than `settleNs`: ages are exact, and no ctime is past `now`.
    public init(now: Int64? = nil, @TreeBuilder _ content: () -> [any TreeNode]) throws {
        var template = TestScratch.template("tree")
        guard mkdtemp(&template) != nil else { throw TreeError("mkdtemp", []) }
        root = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fd = open(root, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw TreeError("open", Array(root.utf8)) }
        defer { close(fd) }
        let nodes = content()
        if let now {
            self.now = now
            for node in nodes { try node.create(in: fd, now: now) }
            return
        }
        var reading = Tree.currentTimeNs()
        for node in nodes { try node.create(in: fd, now: reading) }
        while true {
            let written = Tree.currentTimeNs()
            if written - reading < Tree.settleNs { break }
            reading = written
            for node in nodes { try node.retime(in: fd, now: reading) }
        }
        self.now = reading
    }

    /// The plan options for this tree: its `now`, and one or two threads.
    public func options(threads: Int = 2, budget: Int? = nil) -> PlanOptions {
        PlanOptions(now: now, threads: threads, openDirectoryBudget: budget)
    }

    public func remove() {
        let fd = open(root, O_RDONLY | O_DIRECTORY)
        if fd >= 0 {
            Tree.removeContents(of: fd)
            close(fd)
        }
        rmdir(root)
    }

    /// Empties an open directory through descriptors, so paths deeper than PATH_MAX go too.
    public static func removeContents(of fd: Int32) {
        fchmod(fd, 0o755)
        let copy = dup(fd)
        guard let stream = fdopendir(copy) else { return }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [([UInt8], UInt8)] = []
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(stream) {
            let raw = UnsafeRawPointer(entry) + offset
            let bytes = Array(UnsafeRawBufferPointer(start: raw, count: strlen(raw.assumingMemoryBound(to: CChar.self))))
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            names.append((bytes, entry.pointee.d_type))
        }
        for (name, type) in names {
            withCName(name) { n in
                if type == UInt8(DT_DIR) {
                    let child = openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                    if child >= 0 {
                        removeContents(of: child)
                        close(child)
                    }
                    unlinkat(fd, n, AT_REMOVEDIR)
                } else {
                    unlinkat(fd, n, 0)
                }
            }
        }
    }

    public static func currentTimeNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

public func withCName<R>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    (name + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
}

/// Sets atime and mtime of `name` in `dir` to `now - age` (each), never following a symlink.
public func setTimes(_ dir: Int32, _ name: [UInt8], now: Int64, mtimeAge: PolicyDuration?, atimeAge: PolicyDuration?) throws {
    guard mtimeAge != nil || atimeAge != nil else { return }
    func spec(_ age: PolicyDuration?) -> timespec {
        guard let age else { return timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2 /* UTIME_OMIT */) }
        let t = now - age.nanoseconds
        return timespec(tv_sec: Int(t / 1_000_000_000), tv_nsec: Int(t % 1_000_000_000))
    }
    // With only an mtime age given, atime follows it (a file nobody read since it was written).
    var times = [spec(atimeAge ?? mtimeAge), spec(mtimeAge)]
    let r = withCName(name) { n in utimensat(dir, n, &times, AT_SYMLINK_NOFOLLOW) }
    if r != 0 { throw TreeError("utimensat", name) }
}

/// A regular file of `size` bytes (written, so it has allocated blocks), aged by mtime (and atime).
public struct File: TreeNode {
    public var name: [UInt8]
    public var age: PolicyDuration?
    public var atimeAge: PolicyDuration?
    public var size: Int
    public var contents: [UInt8]?
    public var xattrs: [(String, [UInt8])]

    public init(_ name: String, age: PolicyDuration? = nil, atime: PolicyDuration? = nil, size: Int = 100,
         contents: String? = nil, xattrs: [(String, [UInt8])] = []) {
        self.init(bytes: Array(name.utf8), age: age, atime: atime, size: size, contents: contents, xattrs: xattrs)
    }

    public init(bytes: [UInt8], age: PolicyDuration? = nil, atime: PolicyDuration? = nil, size: Int = 100,
         contents: String? = nil, xattrs: [(String, [UInt8])] = []) {
        self.name = bytes; self.age = age; self.atimeAge = atime; self.size = size
        self.contents = contents.map { Array($0.utf8) }; self.xattrs = xattrs
    }

    public func create(in parent: Int32, now: Int64) throws {
        let fd = withCName(name) { openat(parent, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644) }
        guard fd >= 0 else { throw TreeError("create", name) }
        let data = contents ?? [UInt8](repeating: 0x61, count: size)
        var written = 0
        while written < data.count {
            let n = data.withUnsafeBytes { write(fd, $0.baseAddress! + written, data.count - written) }
            if n <= 0 { close(fd); throw TreeError("write", name) }
            written += n
        }
        close(fd)
        for (key, value) in xattrs { try setAttribute(parent, name, key, value) }
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: atimeAge)
    }

    public func retime(in parent: Int32, now: Int64) throws {
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: atimeAge)
    }
}

/// A directory with children; its own times are set after the children are made (making them moves mtime).
public struct Dir: TreeNode {
    public var name: [UInt8]
    public var age: PolicyDuration?
    public var mode: mode_t?
    public var xattrs: [(String, [UInt8])]
    public var children: [any TreeNode]

    public init(_ name: String, age: PolicyDuration? = nil, mode: mode_t? = nil, xattrs: [(String, [UInt8])] = [],
         @TreeBuilder _ children: () -> [any TreeNode] = { [] }) {
        self.init(bytes: Array(name.utf8), age: age, mode: mode, xattrs: xattrs, children)
    }

    public init(bytes: [UInt8], age: PolicyDuration? = nil, mode: mode_t? = nil, xattrs: [(String, [UInt8])] = [],
         @TreeBuilder _ children: () -> [any TreeNode] = { [] }) {
        self.name = bytes; self.age = age; self.mode = mode; self.xattrs = xattrs; self.children = children()
    }

    public func create(in parent: Int32, now: Int64) throws {
        guard withCName(name, { mkdirat(parent, $0, 0o755) }) == 0 else { throw TreeError("mkdir", name) }
        let fd = withCName(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) }
        guard fd >= 0 else { throw TreeError("open", name) }
        for child in children { try child.create(in: fd, now: now) }
        close(fd)
        for (key, value) in xattrs { try setAttribute(parent, name, key, value) }
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
        if let mode { _ = withCName(name) { fchmodat(parent, $0, mode, 0) } }
    }

    public func retime(in parent: Int32, now: Int64) throws {
        // Children first, as when it was made; setting their times leaves the folder's own mtime alone. A folder
        // made without search permission for its owner is not entered (it had none of its children's times to
        // lose: root, which the tests run as, needs none).
        let fd = withCName(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) }
        if fd >= 0 {
            defer { close(fd) }
            for child in children { try child.retime(in: fd, now: now) }
        }
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }
}

/// A symbolic link (its own times can be set; its target is never followed by the engine).
public struct Symlink: TreeNode {
    public var name: [UInt8]
    public var target: String
    public var age: PolicyDuration?

    public init(_ name: String, to target: String, age: PolicyDuration? = nil) {
        self.name = Array(name.utf8); self.target = target; self.age = age
    }

    public func create(in parent: Int32, now: Int64) throws {
        guard withCName(name, { symlinkat(target, parent, $0) }) == 0 else { throw TreeError("symlink", name) }
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }

    public func retime(in parent: Int32, now: Int64) throws {
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }
}

/// A named pipe.
public struct FIFO: TreeNode {
    public var name: [UInt8]
    public var age: PolicyDuration?
    public init(_ name: String, age: PolicyDuration? = nil) { self.name = Array(name.utf8); self.age = age }

    public func create(in parent: Int32, now: Int64) throws {
        guard withCName(name, { mkfifoat(parent, $0, 0o644) }) == 0 else { throw TreeError("mkfifo", name) }
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }

    public func retime(in parent: Int32, now: Int64) throws {
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }
}

/// A second name for a file made earlier in the same directory.
public struct HardLink: TreeNode {
    public var name: [UInt8]
    public var target: [UInt8]
    public var age: PolicyDuration?
    public init(_ name: String, to target: String, age: PolicyDuration? = nil) {
        self.name = Array(name.utf8); self.target = Array(target.utf8); self.age = age
    }

    public func create(in parent: Int32, now: Int64) throws {
        let r = withCName(target) { t in withCName(name) { n in linkat(parent, t, parent, n, 0) } }
        guard r == 0 else { throw TreeError("link", name) }
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }

    public func retime(in parent: Int32, now: Int64) throws {
        try setTimes(parent, name, now: now, mtimeAge: age, atimeAge: nil)
    }
}

/// A chain of `depth` nested directories named `name`, with `leaf` inside the deepest.
public struct Nest: TreeNode {
    public var name: String
    public var depth: Int
    public var leaf: [any TreeNode]
    public init(_ name: String, depth: Int, @TreeBuilder leaf: () -> [any TreeNode] = { [] }) {
        self.name = name; self.depth = depth; self.leaf = leaf()
    }

    public func create(in parent: Int32, now: Int64) throws {
        var fds: [Int32] = []
        var current = parent
        for _ in 0..<depth {
            let n = Array(name.utf8)
            guard withCName(n, { mkdirat(current, $0, 0o755) }) == 0 else { throw TreeError("mkdir", n) }
            let fd = withCName(n) { openat(current, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) }
            guard fd >= 0 else { throw TreeError("open", n) }
            if current != parent { close(current) }
            current = fd
            fds.append(fd)
        }
        for node in leaf { try node.create(in: current, now: now) }
        if current != parent { close(current) }
    }

    public func retime(in parent: Int32, now: Int64) throws {
        var current = parent
        for _ in 0..<depth {
            let fd = withCName(Array(name.utf8)) { openat(current, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) }
            guard fd >= 0 else { throw TreeError("open", Array(name.utf8)) }
            if current != parent { close(current) }
            current = fd
        }
        defer { if current != parent { close(current) } }
        for node in leaf { try node.retime(in: current, now: now) }
    }
}

/// Sets an extended attribute through the CPosix shim (never following a symlink).
public func setAttribute(_ dir: Int32, _ name: [UInt8], _ key: String, _ value: [UInt8]) throws {
    let r = withCName(name) { n in
        value.withUnsafeBytes { v in
            cposix_setxattrat(dir, n, key, v.baseAddress, v.count, 0)
        }
    }
    guard r == 0 else { throw TreeError("setxattr \(key) on", name) }
}
