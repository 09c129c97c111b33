// Chunk size of model streams. Kept free of gRPC so runtime/ can use it.
#ifndef FEDBERRY_PROTO_CHUNKING_H_
#define FEDBERRY_PROTO_CHUNKING_H_

namespace fedberry::wire {

// Payload bytes per ModelChunk.
inline constexpr int kChunkBytes = 1 << 20;

}  // namespace fedberry::wire

#endif  // FEDBERRY_PROTO_CHUNKING_H_
