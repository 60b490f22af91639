// One std::mutex locked from two member functions (lock_guard, inlined
// at -O2 into them), with a comma in one's parameter list: the profile
// must name the members, not libstdc++'s gthr-default.h, and --lock must
// take either name as printed. Built with g++ by tests/names.rs.
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace shop {
struct Ledger {
    std::mutex m;
    long total = 0;
    __attribute__((noinline)) void add(int n, const std::string &who) {
        std::lock_guard<std::mutex> g(m);
        for (int i = 0; i < n; i++) total += (long)who.size();
    }
    __attribute__((noinline)) void take(int n, long scale) {
        std::lock_guard<std::mutex> g(m);
        for (int i = 0; i < n; i++) total -= scale;
    }
};
}  // namespace shop

shop::Ledger ledger;

int main() {
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; t++)
        threads.emplace_back([t] {
            std::string who = "abc";
            for (int i = 0; i < 20000; i++) {
                if ((i + t) % 2)
                    ledger.add(20, who);
                else
                    ledger.take(20, 3);
            }
        });
    for (auto &t : threads) t.join();
    return ledger.total == 0 ? 0 : 1;
}
