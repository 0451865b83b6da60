"""What ``bench/bench_synth.py``'s sections share and its longer sections: the scenes, the
reader and the matching of its dice to the truth; the flag figures; the flags on renders and
with a learnt size; the flags on the real photos."""
