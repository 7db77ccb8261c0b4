import Courier

// `Session()` in a program that does not link `CourierNIO`: its default transport must be
// URLSession's. Prints the transport's type for `DefaultTransportTests` to read.
let session = Session()
print(String(reflecting: type(of: session.transport)))
