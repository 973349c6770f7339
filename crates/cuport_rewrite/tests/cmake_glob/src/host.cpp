// Host code the C++ compiler builds (globbed apart from the .cu files).
int answer() { return 42; }
