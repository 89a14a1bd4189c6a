// Where the end-to-end product's transfers lose against PCIe: the host-side
// copies measured alone, on the GPU machine (which has nvcc and no Rust):
//   bash scripts/device-run.sh hostcopy
// builds this with the device's nvcc and prints one markdown table.
//
// An end-to-end product moves the caller's pageable limbs through pinned
// slots (src/gpu/staging.rs): threads copy pageable -> pinned while the DMA
// of the previous chunk runs, and back; the result lands in memory GMP has
// just allocated, so the copy back also takes that memory's first page
// faults. Each row times one of those pieces alone, at 1 to 16 threads, so
// that the copy rates can be set against the DMA's and the PCIe floor's.
//
// `host_copy pipeline` times the whole staged transfer instead (pageable ->
// slots -> device and back, the DMA and the host copies overlapping as in
// staging.rs) over the settings staging.rs could take: copy threads, slot
// size, one stream or one a thread, memcpy or non-temporal stores for the
// host copy, threads started per transfer or kept waiting; `host_copy
// interleaved` a few of those settings against each other, interleaved;
// `host_copy chunks` chunk plans against staging.rs's (small first and last
// chunks, larger slots, a ring of pieces every thread copies a share of);
// `host_copy contention` the host copies' rate with DMAs running beside
// them (whether the host's memory feeds both).
#include <cuda_runtime.h>
#include <emmintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void copy_nt(char *dst, const char *src, size_t bytes);

struct Part {
    char *dst;
    const char *src;
    size_t bytes;
    bool nt;
};

static void *copy_part(void *arg) {
    Part *p = (Part *)arg;
    if (p->nt && p->bytes % 64 == 0)
        copy_nt(p->dst, p->src, p->bytes);
    else
        memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

// memcpy(dst, src, bytes) cut into `threads` contiguous parts, one a thread
// (with `nt`, parts of whole 64-byte steps copied with non-temporal stores).
static void threaded_copy(char *dst, const char *src, size_t bytes, int threads, bool nt = false) {
    pthread_t tid[64];
    Part parts[64];
    size_t per = (bytes + threads - 1) / threads;
    for (int i = 0; i < threads; i++) {
        size_t at = (size_t)i * per;
        parts[i].dst = dst + at;
        parts[i].src = src + at;
        parts[i].bytes = at >= bytes ? 0 : (bytes - at < per ? bytes - at : per);
        parts[i].nt = nt;
        pthread_create(&tid[i], NULL, copy_part, &parts[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
}

// GB/s over `bytes`: the median of 5 runs of `what`, each after `setup`
// (untimed).
template <typename Setup, typename What>
static double rate(size_t bytes, Setup setup, What what) {
    double t[5];
    for (int r = 0; r < 5; r++) {
        setup();
        double start = now();
        what();
        t[r] = now() - start;
    }
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (t[j] < t[i]) {
                double x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    return bytes / t[2] / 1e9;
}

// memcpy with non-temporal stores (the destination bypasses the caches, so
// the stores take no read-for-ownership); dst, src and bytes 16-aligned.
static void copy_nt(char *dst, const char *src, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i)), b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32)), d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    _mm_sfence();
}

// One staged-transfer setting.
struct Setting {
    int threads;
    size_t chunk;
    bool own_stream;  // a stream a thread, else all on one (staging.rs: one)
    bool nt;          // the host copy with non-temporal stores
    bool pool;        // threads kept waiting, else started per transfer (staging.rs: started)
    size_t first = 0; // where nonzero: chunks from `first` bytes, doubling after every
                      // `threads` chunks up to `chunk`, and the same sizes down again at the end
    bool pieces = false;  // a ring of pieces that all threads copy together, one DMA a piece
                          // (`staged_pieces`), pieces of `chunk` bytes at most
};

// The transfer's chunks (offset, bytes) in the order lanes take them (chunk
// c to lane c mod threads). With `first` set, the first chunks are small so
// that the first DMA starts sooner, and the last ones are small so that
// the last DMA (up) or copy out of a slot (down) ends sooner.
static std::vector<std::pair<size_t, size_t>> chunk_plan(const Setting &s, size_t bytes) {
    std::vector<std::pair<size_t, size_t>> out;
    if (s.first == 0) {
        for (size_t at = 0; at < bytes; at += s.chunk) out.push_back({at, std::min(s.chunk, bytes - at)});
        return out;
    }
    // Sizes from the front until half the bytes, mirrored for the back half.
    std::vector<size_t> half;
    size_t sum = 0, goal = bytes / 2;
    for (size_t j = 0; sum < goal; j++) {
        size_t n = std::min(std::min(s.chunk, s.first << std::min<size_t>(j / s.threads, 20)), goal - sum);
        half.push_back(n);
        sum += n;
    }
    size_t at = 0;
    for (size_t n : half) out.push_back({at, n}), at += n;
    size_t rest = bytes - at;  // bytes - goal >= goal
    std::vector<size_t> back(half.rbegin(), half.rend());
    if (!back.empty()) back[0] += rest - goal;
    for (size_t n : back) out.push_back({at, n}), at += n;
    return out;
}

// Copy threads kept between transfers: run(job) calls job(i) on threads
// 0..n-1 and returns when all have.
struct Pool {
    std::vector<std::thread> threads;
    std::mutex m;
    std::condition_variable go, done;
    std::function<void(int)> job;
    int generation = 0, left = 0;
    bool quit = false;
    explicit Pool(int n) {
        for (int i = 0; i < n; i++)
            threads.emplace_back([this, i] {
                int seen = 0;
                for (;;) {
                    std::unique_lock<std::mutex> l(m);
                    go.wait(l, [&] { return quit || generation != seen; });
                    if (quit) return;
                    seen = generation;
                    l.unlock();
                    job(i);
                    l.lock();
                    if (--left == 0) done.notify_one();
                }
            });
    }
    void run(std::function<void(int)> j) {
        std::unique_lock<std::mutex> l(m);
        job = std::move(j);
        left = (int)threads.size();
        generation++;
        go.notify_all();
        done.wait(l, [&] { return left == 0; });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> l(m);
            quit = true;
        }
        go.notify_all();
        for (auto &t : threads) t.join();
    }
};

// Each thread's two pinned slots, events and stream, made once.
struct Lanes {
    std::vector<char *> slots;
    std::vector<cudaEvent_t> events;
    std::vector<cudaStream_t> streams;
    cudaStream_t shared;
    Lanes(int n, size_t chunk) {
        CHECK(cudaStreamCreateWithFlags(&shared, cudaStreamNonBlocking));
        for (int i = 0; i < 2 * n; i++) {
            char *p;
            CHECK(cudaHostAlloc((void **)&p, chunk, cudaHostAllocDefault));
            memset(p, 0, chunk);
            slots.push_back(p);
            cudaEvent_t e;
            CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            events.push_back(e);
        }
        for (int i = 0; i < n; i++) {
            cudaStream_t s;
            CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            streams.push_back(s);
        }
    }
};

// One staged transfer of `bytes` between pageable `host` and `device`, as
// staging.rs does it under setting `s`.
static void staged(const Setting &s, Lanes &lanes, Pool *pool, bool up, char *host, char *device, size_t bytes) {
    const std::vector<std::pair<size_t, size_t>> plan = chunk_plan(s, bytes);
    size_t chunks = plan.size();
    auto lane = [&](int i) {
        cudaStream_t st = s.own_stream ? lanes.streams[i] : lanes.shared;
        char *slot[2] = {lanes.slots[2 * i], lanes.slots[2 * i + 1]};
        cudaEvent_t ev[2] = {lanes.events[2 * i], lanes.events[2 * i + 1]};
        bool pending[2] = {false, false};
        size_t at[2] = {0, 0}, len[2] = {0, 0};
        auto host_copy = [&](char *dst, const char *src, size_t n) {
            if (s.nt && n % 64 == 0)
                copy_nt(dst, src, n);
            else
                memcpy(dst, src, n);
        };
        int j = 0;
        for (size_t c = i; c < chunks; c += s.threads, j++) {
            int k = j % 2;
            size_t start = plan[c].first, n = plan[c].second;
            if (up) {
                if (pending[k]) CHECK(cudaEventSynchronize(ev[k]));
                host_copy(slot[k], host + start, n);
                CHECK(cudaMemcpyAsync(device + start, slot[k], n, cudaMemcpyHostToDevice, st));
                CHECK(cudaEventRecord(ev[k], st));
                pending[k] = true;
            } else {
                CHECK(cudaMemcpyAsync(slot[k], device + start, n, cudaMemcpyDeviceToHost, st));
                CHECK(cudaEventRecord(ev[k], st));
                pending[k] = true;
                at[k] = start;
                len[k] = n;
                if (pending[1 - k]) {
                    CHECK(cudaEventSynchronize(ev[1 - k]));
                    host_copy(host + at[1 - k], slot[1 - k], len[1 - k]);
                    pending[1 - k] = false;
                }
            }
        }
        for (int k = 0; k < 2; k++)
            if (pending[k]) {
                CHECK(cudaEventSynchronize(ev[k]));
                if (!up) host_copy(host + at[k], slot[k], len[k]);
            }
    };
    if (pool) {
        pool->run(lane);
    } else {
        std::vector<std::thread> t;
        for (int i = 0; i < s.threads; i++) t.emplace_back(lane, i);
        for (auto &x : t) x.join();
    }
}

// A ring of pinned pieces shared by all the copy threads: piece k (of at
// most `s.chunk` bytes, about an eighth of the transfer, at least 1 MiB)
// goes through slot k mod RING; every thread copies its 1/threads of each
// piece, and the thread that finishes a piece last queues its DMA (up), or
// the DMA of the piece RING later into the freed slot (down). One DMA a
// piece from one thread at a time, instead of one a thread's chunk.
static const int RING = 4;
struct Ring {
    char *slots[RING];
    cudaEvent_t events[RING];
    size_t bytes;
    explicit Ring(size_t b) : bytes(b) {
        for (int i = 0; i < RING; i++) {
            CHECK(cudaHostAlloc((void **)&slots[i], b, cudaHostAllocDefault));
            memset(slots[i], 0, b);
            CHECK(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming));
        }
    }
};

static void staged_pieces(const Setting &s, Ring &ring, cudaStream_t st, Pool *pool, bool up, char *host, char *device,
                          size_t bytes) {
    size_t piece = std::min(std::min(s.chunk, ring.bytes), std::max<size_t>(1u << 20, (bytes / 8 + 4095) & ~(size_t)4095));
    size_t pieces = (bytes + piece - 1) / piece;
    std::vector<std::atomic<int>> done(pieces);
    std::vector<std::atomic<bool>> issued(pieces);
    for (size_t k = 0; k < pieces; k++) done[k] = 0, issued[k] = false;
    auto len = [&](size_t k) { return std::min(piece, bytes - k * piece); };
    auto dma = [&](size_t k) {
        char *slot = ring.slots[k % RING];
        if (up)
            CHECK(cudaMemcpyAsync(device + k * piece, slot, len(k), cudaMemcpyHostToDevice, st));
        else
            CHECK(cudaMemcpyAsync(slot, device + k * piece, len(k), cudaMemcpyDeviceToHost, st));
        CHECK(cudaEventRecord(ring.events[k % RING], st));
        issued[k].store(true, std::memory_order_release);
    };
    auto wait_issued = [&](size_t k) {
        while (!issued[k].load(std::memory_order_acquire)) _mm_pause();
    };
    if (!up)
        for (size_t k = 0; k < pieces && k < (size_t)RING; k++) dma(k);
    const int T = s.threads;
    auto lane = [&](int i) {
        for (size_t k = 0; k < pieces; k++) {
            char *slot = ring.slots[k % RING];
            size_t n = len(k), per = ((n + T - 1) / T + 63) & ~(size_t)63;
            size_t a = std::min(n, per * i), b = std::min(n, a + per);
            if (up) {
                if (k >= (size_t)RING) {
                    wait_issued(k - RING);
                    CHECK(cudaEventSynchronize(ring.events[k % RING]));
                }
                if (b > a) {
                    if (s.nt && (b - a) % 64 == 0)
                        copy_nt(slot + a, host + k * piece + a, b - a);
                    else
                        memcpy(slot + a, host + k * piece + a, b - a);
                }
                if (done[k].fetch_add(1) == T - 1) dma(k);
            } else {
                wait_issued(k);
                CHECK(cudaEventSynchronize(ring.events[k % RING]));
                if (b > a) memcpy(host + k * piece + a, slot + a, b - a);
                if (done[k].fetch_add(1) == T - 1 && k + RING < pieces) dma(k + RING);
            }
        }
    };
    if (pool) {
        pool->run(lane);
    } else {
        std::vector<std::thread> t;
        for (int i = 0; i < T; i++) t.emplace_back(lane, i);
        for (auto &x : t) x.join();
    }
    if (up) {
        wait_issued(pieces - 1);
        CHECK(cudaStreamSynchronize(st));
    }
}

// A staged transfer's ends: the operand (patterned, not zeros), the
// pageable buffer it comes back into, and the device buffer, 160 MiB each.
struct Buffers {
    static constexpr size_t most = 160u << 20;
    char *host, *back, *device;
    Buffers() {
        CHECK(cudaFree(0));
        host = (char *)aligned_alloc(64, most);
        back = (char *)aligned_alloc(64, most);
        for (size_t i = 0; i < most; i++) host[i] = (char)(i * 2654435761u >> 13);
        memset(back, 0, most);
        CHECK(cudaMalloc((void **)&device, most));
    }
};

static int pipeline(void) {
    const size_t sizes[] = {8u << 20, 16u << 20, 80u << 20, 160u << 20};  // 10^6 limbs up, down; 10^7 up, down
    const size_t max_chunk = 4u << 20;
    const int max_threads = 16;
    Buffers b;
    char *host = b.host, *back = b.back, *device = b.device;
    const size_t most = Buffers::most;
    Lanes lanes(max_threads, max_chunk);
    printf("GB/s, median of 5 (one transfer untimed first), up: pageable -> device, down: device -> touched pageable\n\n");
    printf("| threads | slot | streams | host copy | threads kept | up 8 MiB | 16 MiB | 80 MiB | 160 MiB | down 8 MiB | 16 MiB | 80 MiB | 160 MiB |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int threads : {4, 8, 16})
        for (size_t chunk : {256u << 10, 1u << 20, 4u << 20})
            for (int own : {0, 1})
                for (int nt : {0, 1})
                    for (int keep : {0, 1}) {
                        Setting s{threads, chunk, own != 0, nt != 0, keep != 0};
                        Pool *pool = keep ? new Pool(threads) : NULL;
                        printf("| %d | %zu KiB | %s | %s | %s |", threads, chunk >> 10, own ? "one a thread" : "one", nt ? "non-temporal" : "memcpy",
                               keep ? "yes" : "no");
                        for (int up : {1, 0})
                            for (size_t bytes : sizes) {
                                auto none = [] {};
                                staged(s, lanes, pool, up, up ? host : back, device, bytes);
                                double gbs = rate(bytes, none, [&] { staged(s, lanes, pool, up, up ? host : back, device, bytes); });
                                printf(" %.1f |", gbs);
                            }
                        // The operand must come back whole under every setting.
                        CHECK(cudaMemset(device, 0, most));
                        memset(back, 0, most);
                        staged(s, lanes, pool, true, host, device, most - 4096);
                        staged(s, lanes, pool, false, back, device, most - 4096);
                        printf(" %s\n", memcmp(host, back, most - 4096) == 0 ? "" : "LOST DATA |");
                        fflush(stdout);
                        delete pool;
                    }
    return 0;
}

// The transfers a table of interleaved settings times (up: pageable ->
// device; down: device -> touched pageable), and how many repetitions.
struct Case {
    bool up;
    size_t bytes;
};
static const Case CASES[] = {{true, 8u << 20}, {true, 16u << 20}, {true, 80u << 20}, {false, 16u << 20}, {false, 80u << 20}, {false, 160u << 20}};
static const int REPS = 21;

// GB/s of each of `count` settings in each case: the median of REPS
// repetitions, each timing every setting in turn (`run(k, up, bytes)` makes
// one transfer under setting k), after one untimed transfer each.
template <typename Run>
static std::vector<std::vector<double>> interleaved_rates(int count, Run run) {
    std::vector<std::vector<double>> gbs(count);
    for (const Case &c : CASES) {
        std::vector<std::vector<double>> t(count);
        for (int k = 0; k < count; k++) run(k, c.up, c.bytes);
        for (int r = 0; r < REPS; r++)
            for (int k = 0; k < count; k++) {
                double start = now();
                run(k, c.up, c.bytes);
                t[k].push_back(now() - start);
            }
        for (int k = 0; k < count; k++) {
            std::sort(t[k].begin(), t[k].end());
            gbs[k].push_back(c.bytes / t[k][REPS / 2] / 1e9);
        }
    }
    return gbs;
}

// The cases' columns of a table's header.
static void case_columns(void) {
    for (const Case &c : CASES) printf(" %s %zu MiB |", c.up ? "up" : "down", c.bytes >> 20);
}

// A few settings against each other, interleaved (each repetition times
// every setting in turn), so that drift in the host's load over the run
// falls on all of them alike: the median of 21 a setting.
static int interleaved(void) {
    const Setting settings[] = {
        {8, 1u << 20, false, false, false},   // copy threads started per transfer
        {8, 1u << 20, false, false, true},    // kept threads
        {8, 1u << 20, false, true, true},     // kept threads, non-temporal stores
        {16, 1u << 20, false, true, true},    // 16 of them
        {8, 512u << 10, false, true, true},   // smaller slots
        {8, 4u << 20, false, true, true},     // larger slots
        {8, 4u << 20, false, false, true},    // larger slots, memcpy
    };
    const int count = sizeof settings / sizeof settings[0];
    Buffers b;
    Lanes lanes(16, 4u << 20);
    std::vector<Pool *> pools;
    for (const Setting &s : settings) pools.push_back(s.pool ? new Pool(s.threads) : NULL);
    printf("GB/s, median of %d interleaved repetitions (every setting once a repetition)\n\n", REPS);
    printf("| threads | slot | host copy | threads kept |");
    case_columns();
    printf("\n|---|---|---|---|");
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) printf("---|");
    printf("\n");
    std::vector<std::vector<double>> gbs = interleaved_rates(count, [&](int k, bool up, size_t bytes) {
        staged(settings[k], lanes, pools[k], up, up ? b.host : b.back, b.device, bytes);
    });
    for (int k = 0; k < count; k++) {
        const Setting &s = settings[k];
        printf("| %d | %zu KiB | %s | %s |", s.threads, s.chunk >> 10, s.nt ? "non-temporal" : "memcpy", s.pool ? "yes" : "no");
        for (double g : gbs[k]) printf(" %.1f |", g);
        printf("\n");
    }
    for (Pool *p : pools) delete p;
    return 0;
}

// Chunk plans against each other, interleaved as above: the staged
// transfer as staging.rs makes it (16 kept threads, 1 MiB slots,
// non-temporal copies in) against small first and last chunks, larger
// slots, and a ring of pieces (`staged_pieces`); every plan must bring
// 160 MiB back whole.
static int chunks(void) {
    const Setting settings[] = {
        {16, 1u << 20, false, true, true},              // staging.rs
        {16, 2u << 20, false, true, true, 128u << 10},  // from 128 KiB up to 2 MiB and down
        {16, 2u << 20, false, true, true},              // 2 MiB throughout
        {16, 4u << 20, false, true, true},              // 4 MiB throughout
        {16, 8u << 20, false, true, true, 0, true},     // a ring of pieces up to 8 MiB
        {16, 4u << 20, false, true, true, 0, true},     // a ring of pieces up to 4 MiB
        {8, 8u << 20, false, true, true, 0, true},      // 8 threads, pieces up to 8 MiB
    };
    const int count = sizeof settings / sizeof settings[0];
    Buffers b;
    Lanes lanes(16, 4u << 20);
    Ring ring(8u << 20);
    std::vector<Pool *> pools;
    for (const Setting &s : settings) pools.push_back(s.pool ? new Pool(s.threads) : NULL);
    auto staged = [&](const Setting &s, Pool *pool, bool up, char *host, size_t bytes) {
        if (s.pieces)
            staged_pieces(s, ring, lanes.shared, pool, up, host, b.device, bytes);
        else
            ::staged(s, lanes, pool, up, host, b.device, bytes);
    };
    printf("GB/s, median of %d interleaved repetitions (every setting once a repetition)\n\n", REPS);
    printf("| threads | slot | first chunks | streams |");
    case_columns();
    printf(" whole |\n|---|---|---|---|");
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) printf("---|");
    printf("---|\n");
    std::vector<std::vector<double>> gbs =
        interleaved_rates(count, [&](int k, bool up, size_t bytes) { staged(settings[k], pools[k], up, up ? b.host : b.back, bytes); });
    for (int k = 0; k < count; k++) {
        const Setting &s = settings[k];
        // The operand must come back whole under every setting.
        const size_t most = Buffers::most - 4096;
        CHECK(cudaMemset(b.device, 0, most));
        memset(b.back, 0, most);
        staged(s, pools[k], true, b.host, most);
        staged(s, pools[k], false, b.back, most);
        printf("| %d | %zu KiB | %s | %s |", s.threads, s.chunk >> 10, s.pieces ? "ring of pieces" : s.first ? "from 128 KiB" : "whole slot",
               s.own_stream ? "one a thread" : "one");
        for (double g : gbs[k]) printf(" %.1f |", g);
        printf(" %s |\n", memcmp(b.host, b.back, most) == 0 ? "yes" : "LOST DATA");
    }
    for (Pool *p : pools) delete p;
    return 0;
}

// Whether the host's memory feeds the staging's copies and the DMA at once:
// 160 MiB moved by DMA (pinned -> device, device -> pinned) and by 16
// threads' host copies (pageable -> pinned), each alone, then the copies
// while DMAs of other pinned buffers run without pause. GB/s, median of 5.
static int contention(void) {
    const size_t bytes = 160u << 20;
    CHECK(cudaFree(0));
    char *pageable = (char *)aligned_alloc(64, bytes), *pinned, *pinned2, *device;
    memset(pageable, 1, bytes);
    CHECK(cudaHostAlloc((void **)&pinned, bytes, cudaHostAllocDefault));
    CHECK(cudaHostAlloc((void **)&pinned2, bytes, cudaHostAllocDefault));
    memset(pinned, 2, bytes);
    memset(pinned2, 3, bytes);
    CHECK(cudaMalloc((void **)&device, bytes));
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    auto none = [] {};
    printf("| what | alone | beside DMAs up | beside DMAs down |\n|---|---|---|---|\n");
    double up = rate(bytes, none, [&] { CHECK(cudaMemcpy(device, pinned2, bytes, cudaMemcpyHostToDevice)); });
    double down = rate(bytes, none, [&] { CHECK(cudaMemcpy(pinned2, device, bytes, cudaMemcpyDeviceToHost)); });
    printf("| DMA 160 MiB | up %.1f, down %.1f | | |\n", up, down);
    for (int nt : {0, 1}) {
        auto copy = [&] { threaded_copy(pinned, pageable, bytes, 16, nt != 0); };
        double alone = rate(bytes, none, copy);
        double beside[2];
        for (int dir = 0; dir < 2; dir++) {
            std::atomic<bool> stop(false);
            std::atomic<long> moved(0);
            std::thread dma([&] {
                while (!stop.load()) {
                    if (dir == 0)
                        CHECK(cudaMemcpyAsync(device, pinned2, 16u << 20, cudaMemcpyHostToDevice, st));
                    else
                        CHECK(cudaMemcpyAsync(pinned2, device, 16u << 20, cudaMemcpyDeviceToHost, st));
                    CHECK(cudaStreamSynchronize(st));
                    moved += 16 << 20;
                }
            });
            double start = now();
            beside[dir] = rate(bytes, none, copy);
            double took = now() - start;
            stop = true;
            dma.join();
            printf("| (DMA %s beside the copies: %.1f GB/s) | | | |\n", dir ? "down" : "up", moved.load() / took / 1e9);
        }
        printf("| 16 threads' copies pageable -> pinned, %s | %.1f | %.1f | %.1f |\n", nt ? "non-temporal" : "memcpy", alone, beside[0],
               beside[1]);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "pipeline") == 0) return pipeline();
    if (argc > 1 && strcmp(argv[1], "chunks") == 0) return chunks();
    if (argc > 1 && strcmp(argv[1], "contention") == 0) return contention();
    if (argc > 1 && strcmp(argv[1], "interleaved") == 0) return interleaved();
    const int thread_counts[] = {1, 2, 4, 8, 16};
    const size_t sizes[] = {8u << 20, 80u << 20, 160u << 20};  // 10^6-ish limbs, 10^7 limbs up, down
    CHECK(cudaFree(0));
    printf("| bytes | what | 1 thread | 2 | 4 | 8 | 16 |\n|---|---|---|---|---|---|---|\n");
    for (size_t bytes : sizes) {
        char *pageable = (char *)malloc(bytes), *pinned, *device;
        memset(pageable, 1, bytes);
        CHECK(cudaHostAlloc((void **)&pinned, bytes, cudaHostAllocDefault));
        memset(pinned, 2, bytes);
        CHECK(cudaMalloc((void **)&device, bytes));
        const char *names[] = {"pageable -> pinned (upload staging)", "pinned -> pageable, touched",
                               "pinned -> fresh malloc (first touch: the result's download)"};
        for (int kind = 0; kind < 3; kind++) {
            printf("| %zu | %s |", bytes, names[kind]);
            for (int threads : thread_counts) {
                char *fresh = NULL;
                auto none = [] {};
                double gbs;
                if (kind == 0) {
                    gbs = rate(bytes, none, [&] { threaded_copy(pinned, pageable, bytes, threads); });
                } else if (kind == 1) {
                    gbs = rate(bytes, none, [&] { threaded_copy(pageable, pinned, bytes, threads); });
                } else {
                    gbs = rate(bytes, [&] { free(fresh); fresh = (char *)malloc(bytes); },
                               [&] { threaded_copy(fresh, pinned, bytes, threads); });
                    free(fresh);
                }
                printf(" %.1f |", gbs);
            }
            printf("\n");
        }
        auto none = [] {};
        auto dma = [&](void *to, const void *from, cudaMemcpyKind kind) {
            return rate(bytes, none, [&] { CHECK(cudaMemcpy(to, from, bytes, kind)); });
        };
        double up = dma(device, pinned, cudaMemcpyHostToDevice), down = dma(pinned, device, cudaMemcpyDeviceToHost);
        double up_pageable = dma(device, pageable, cudaMemcpyHostToDevice);
        double down_pageable = dma(pageable, device, cudaMemcpyDeviceToHost);
        printf("| %zu | DMA pinned: up %.1f, down %.1f; driver from/to pageable: up %.1f, down %.1f | | | | | |\n", bytes, up,
               down, up_pageable, down_pageable);
        CHECK(cudaFree(device));
        CHECK(cudaFreeHost(pinned));
        free(pageable);
    }
    return 0;
}
