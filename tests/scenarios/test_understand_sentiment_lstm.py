"""Fluid's understand_sentiment LSTM model (embedding + fc + dynamic_lstm + sequence_pool max
+ fc softmax) on a learnable synthetic variable-length task where order matters: the label
says whether word A comes before word B in the sentence."""

import numpy as np
from oar import fluid

VOCAB, A, B = 40, 1, 2


def _sentences(n, rng):
    data = []
    for _ in range(n):
        length = int(rng.integers(3, 10))
        words = rng.integers(3, VOCAB, size=length)
        i, j = rng.choice(length, size=2, replace=False)
        words[i], words[j] = A, B
        data.append((words.tolist(), int(i < j)))
    return data


def _lstm_net(data, label, input_dim, class_dim=2, emb_dim=16, hid_dim=16):
    emb = fluid.layers.embedding(input=data, size=[input_dim, emb_dim], is_sparse=True)
    fc1 = fluid.layers.fc(input=emb, size=hid_dim * 4)
    lstm1, _ = fluid.layers.dynamic_lstm(input=fc1, size=hid_dim * 4)
    pooled = fluid.layers.sequence_pool(input=lstm1, pool_type="max")
    prediction = fluid.layers.fc(input=pooled, size=class_dim, act="softmax")
    cost = fluid.layers.cross_entropy(input=prediction, label=label)
    return fluid.layers.mean(cost), fluid.layers.accuracy(input=prediction, label=label)


def test_lstm_learns_word_order():
    rng = np.random.default_rng(0)
    train, test = _sentences(1024, rng), _sentences(200, rng)
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 3
    with fluid.program_guard(main, startup):
        words = fluid.data(name="words", shape=[None, 1], dtype="int64", lod_level=1)
        label = fluid.data(name="label", shape=[None, 1], dtype="int64")
        avg_cost, acc = _lstm_net(words, label, VOCAB)
        test_program = main.clone(for_test=True)
        fluid.optimizer.Adam(learning_rate=0.01).minimize(avg_cost)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    exe.run(startup)
    feeder = fluid.DataFeeder(feed_list=[words, label], place=place)
    for _ in range(6):
        for i in range(0, len(train), 32):
            exe.run(main, feed=feeder.feed(train[i : i + 32]), fetch_list=[avg_cost])
    (accuracy,) = exe.run(test_program, feed=feeder.feed(test), fetch_list=[acc])
    print("test accuracy", accuracy)
    assert float(np.asarray(accuracy).reshape(-1)[0]) > 0.9
